/* What the memory-rate peers (read_bound.c, stream_copy.c) share: their
 * buffers on 4 KiB pages or on 2 MiB ones (the runtime puts large device
 * blocks on huge pages, so a peer measures both and counts the faster),
 * and the best time of a few runs of their threads. Header-only, so each
 * peer still builds from its one file with a plain gcc. */
#ifndef NEURON_BENCH_PEERS_PEER_PAGES_H_
#define NEURON_BENCH_PEERS_PEER_PAGES_H_

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double peer_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* `bytes` on 2 MiB pages (huge) or 4 KiB ones; free with free(); null
 * when there is no memory. */
static void* peer_alloc(size_t bytes, int huge) {
  void* p = NULL;
  if (posix_memalign(&p, huge ? (size_t)2 << 20 : 64, bytes) != 0) return NULL;
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

/* The fastest of `runs` runs of `threads` threads (at most 256), thread t
 * calling fn((void*)t), in seconds. */
static double peer_best_of(int runs, int threads, void* (*fn)(void*)) {
  pthread_t tid[256];
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const double t0 = peer_now();
    for (long t = 0; t < threads; ++t) pthread_create(&tid[t], NULL, fn, (void*)t);
    for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
    const double dt = peer_now() - t0;
    if (dt < best) best = dt;
  }
  return best;
}

#endif /* NEURON_BENCH_PEERS_PEER_PAGES_H_ */
