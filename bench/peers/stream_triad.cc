// The STREAM triad, a[i] = b[i] + s * c[i] over doubles, as STREAM itself
// runs it: an OpenMP parallel loop over arrays first touched by the same
// threads, built -O3 -march=native -fopenmp (the fastest honest STREAM
// build on this machine). THREADS OpenMP threads, best of RUNS; prints
// GB/s (1e9 bytes) counting 24 bytes per element, as STREAM does.
// Usage: stream_triad [THREADS] [RUNS] [MiB per array]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 10;
  const size_t mib = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 256;
  const long n = static_cast<long>(mib * (1 << 20) / sizeof(double));
  omp_set_num_threads(threads);
  // Uninitialised storage, so each page is first touched by the thread that
  // later streams it (STREAM's own initialisation loop).
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  double* __restrict pa = a.get();
  double* __restrict pb = b.get();
  double* __restrict pc = c.get();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    pa[i] = 0.0;
    pb[i] = 1.0;
    pc[i] = 2.0;
  }
  const double s = 3.0;
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (pa[n / 2] != 7.0) {  // keeps the loop from being optimised away
    std::fprintf(stderr, "stream_triad: wrong result\n");
    return 1;
  }
  std::printf("%.2f\n", 24.0 * static_cast<double>(n) / best / 1e9);
  return 0;
}
