/* The read bound of a decode step: BYTES read once on THREADS threads by a
 * plain AVX2 loop (sums of 32-byte loads, so nothing is optimised away),
 * each thread's part read as STREAMS interleaved sequential streams (1, 4,
 * 8 and 16 tried: one stream a core leaves the memory idle between the
 * prefetcher's requests, a skinny product reads 16 rows at once), best of
 * RUNS for each, on 4 KiB pages and on 2 MiB ones (the runtime puts large
 * device blocks, the weights, on huge pages: the bound gets them too);
 * prints the best GB/s (1e9 bytes). The buffer is touched first, so page
 * faults are not counted.
 * Usage: read_bound THREADS RUNS MIB */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "peer_pages.h"

static uint8_t* buf;
static size_t bytes;
static int threads, streams;
static volatile float sink;

static void* read_part(void* arg) {
  const long t = (long)arg;
  const size_t lo = bytes * t / threads / 128 * 128, hi = t + 1 == threads ? bytes / 128 * 128 : bytes * (t + 1) / threads / 128 * 128;
  /* `streams` equal pieces of [lo, hi), 128 bytes of each in turn. */
  const size_t piece = (hi - lo) / streams / 128 * 128;
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t off = 0; off < piece; off += 128)
    for (int k = 0; k < streams; ++k) {
      const uint8_t* p = buf + lo + k * piece + off;
      s0 = _mm256_add_ps(s0, _mm256_load_ps((const float*)p));
      s1 = _mm256_add_ps(s1, _mm256_load_ps((const float*)(p + 32)));
      s2 = _mm256_add_ps(s2, _mm256_load_ps((const float*)(p + 64)));
      s3 = _mm256_add_ps(s3, _mm256_load_ps((const float*)(p + 96)));
    }
  for (size_t i = lo + streams * piece; i < hi; i += 128)  /* what the pieces left */
    s0 = _mm256_add_ps(s0, _mm256_load_ps((const float*)(buf + i)));
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  sink = out[0];
  return NULL;
}

int main(int argc, char** argv) {
  threads = argc > 1 ? atoi(argv[1]) : 2;
  const int runs = argc > 2 ? atoi(argv[2]) : 10;
  const size_t mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 512;
  if (threads < 1 || threads > 256 || runs < 1 || mib < 1 || mib > (1u << 20)) {
    fprintf(stderr, "usage: read_bound THREADS RUNS MIB\n");
    return 2;
  }
  bytes = mib << 20;
  double best = 1e30;
  const int tried[] = {1, 4, 8, 16};
  for (int huge = 0; huge < 2; ++huge) {
    buf = peer_alloc(bytes, huge);
    if (buf == NULL) {
      fprintf(stderr, "read_bound: cannot allocate %zu MiB\n", mib);
      return 1;
    }
    memset(buf, 1, bytes);
    for (int v = 0; v < 4; ++v) {
      streams = tried[v];
      const double dt = peer_best_of(runs, threads, read_part);
      if (dt < best) best = dt;
    }
    free(buf);
  }
  printf("%.2f\n", bytes / best / 1e9);
  return 0;
}
