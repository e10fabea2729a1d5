/* Open MPI's MPI_Allreduce (fp32 sum) for bench/allreduce.sh.
 * Usage: mpirun -np 2 mpi_allreduce ITERS WARMUP BYTES...
 * Rank 0 prints "BYTES AVG_US" per size. Buffers are allocated and touched
 * once per size before timing, as neuron-allreduce does. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 4) {
    if (rank == 0) fprintf(stderr, "usage: mpi_allreduce ITERS WARMUP BYTES...\n");
    MPI_Finalize();
    return 2;
  }
  const int iters = atoi(argv[1]), warmup = atoi(argv[2]);
  for (int a = 3; a < argc; ++a) {
    const size_t bytes = strtoull(argv[a], NULL, 10);
    const int n = (int)(bytes / sizeof(float));
    float* in = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    float* out = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    memset(in, 0, bytes);
    memset(out, 0, bytes);
    for (int i = 0; i < warmup; ++i) MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double us = (MPI_Wtime() - t0) * 1e6 / iters, worst = 0;
    MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%zu %.3f\n", bytes, worst);
    free(in);
    free(out);
  }
  MPI_Finalize();
  return 0;
}
