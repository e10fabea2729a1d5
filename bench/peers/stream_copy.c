/* STREAM copy (b[i] = a[i]) over doubles on THREADS threads, best of RUNS;
 * prints GB/s (1e9 bytes) counting 16 bytes per element, as STREAM does.
 * The arrays on 4 KiB pages and on 2 MiB ones, the faster counted (the
 * runtime puts large device blocks on huge pages).
 * Usage: stream_copy [THREADS] [RUNS] [MiB per array] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double *a, *b;
static size_t n;
static int threads;

static void* copy_part(void* arg) {
  const long t = (long)arg;
  const size_t lo = n * t / threads, hi = n * (t + 1) / threads;
  memcpy(b + lo, a + lo, (hi - lo) * sizeof(double));
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  threads = argc > 1 ? atoi(argv[1]) : 2;
  const int runs = argc > 2 ? atoi(argv[2]) : 10;
  const size_t mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 256;
  n = mib * (1u << 20) / sizeof(double);
  if (threads < 1) return 1;
  if (threads > 64) threads = 64;
  double best = 1e30;
  pthread_t pool[64];
  for (int huge = 0; huge < 2; ++huge) {
    const size_t align = huge ? (size_t)2 << 20 : 64;
    if (posix_memalign((void**)&a, align, n * sizeof(double)) != 0 ||
        posix_memalign((void**)&b, align, n * sizeof(double)) != 0) return 1;
    if (huge) {
      madvise(a, n * sizeof(double), MADV_HUGEPAGE);
      madvise(b, n * sizeof(double), MADV_HUGEPAGE);
    }
    for (size_t i = 0; i < n; ++i) a[i] = 1.0, b[i] = 0.0;
    for (int r = 0; r < runs; ++r) {
      const double t0 = now();
      for (long t = 0; t < threads; ++t) pthread_create(&pool[t], NULL, copy_part, (void*)t);
      for (int t = 0; t < threads; ++t) pthread_join(pool[t], NULL);
      const double dt = now() - t0;
      if (dt < best) best = dt;
    }
    free(a);
    free(b);
  }
  printf("%.3f\n", 16.0 * n / best / 1e9);
  return 0;
}
