/* STREAM copy (b[i] = a[i]) over doubles on THREADS threads, best of RUNS;
 * prints GB/s (1e9 bytes) counting 16 bytes per element, as STREAM does.
 * The arrays on 4 KiB pages and on 2 MiB ones, the faster counted (the
 * runtime puts large device blocks on huge pages).
 * Usage: stream_copy [THREADS] [RUNS] [MiB per array] */
#include <stdio.h>
#include <string.h>

#include "peer_pages.h"

static double *a, *b;
static size_t n;
static int threads;

static void* copy_part(void* arg) {
  const long t = (long)arg;
  const size_t lo = n * t / threads, hi = n * (t + 1) / threads;
  memcpy(b + lo, a + lo, (hi - lo) * sizeof(double));
  return NULL;
}

int main(int argc, char** argv) {
  threads = argc > 1 ? atoi(argv[1]) : 2;
  const int runs = argc > 2 ? atoi(argv[2]) : 10;
  const size_t mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 256;
  n = mib * (1u << 20) / sizeof(double);
  if (threads < 1) return 1;
  if (threads > 64) threads = 64;
  double best = 1e30;
  for (int huge = 0; huge < 2; ++huge) {
    a = peer_alloc(n * sizeof(double), huge);
    b = peer_alloc(n * sizeof(double), huge);
    if (a == NULL || b == NULL) return 1;
    for (size_t i = 0; i < n; ++i) a[i] = 1.0, b[i] = 0.0;
    const double dt = peer_best_of(runs, threads, copy_part);
    if (dt < best) best = dt;
    free(a);
    free(b);
  }
  printf("%.3f\n", 16.0 * n / best / 1e9);
  return 0;
}
