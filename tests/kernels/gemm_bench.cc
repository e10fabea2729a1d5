// Compares the two GEMM libraries available here on the shapes the
// executor cares about, each with its own threading: OpenBLAS
// (cblas_sgemm, static) and oneDNN (dnnl_sgemm, shared library, OpenMP).
// Prints GFLOP/s per shape; run via bench/gemm_peers.sh, which also sets
// the thread counts.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>


namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

template <typename F>
double BestOf(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, Seconds(std::chrono::steady_clock::now() - t0));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  openblas_set_num_threads(threads);
  struct Shape { int m, n, k; } shapes[] = {{256, 1024, 1024}, {1024, 1024, 1024}, {64, 4096, 1024}, {8, 1024, 1024}};
  std::printf("%-18s %12s %12s %8s\n", "M x N x K", "openblas", "onednn", "faster");
  for (const Shape& s : shapes) {
    std::vector<float> a(size_t(s.m) * s.k, 0.5f), b(size_t(s.k) * s.n, 0.25f), c(size_t(s.m) * s.n);
    double flop = 2.0 * s.m * s.n * s.k;
    double t_ob = BestOf(reps, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k,
                  b.data(), s.n, 0.0f, c.data(), s.n);
    });
    double t_dn = BestOf(reps, [&] {
      dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(), s.n);
    });
    char name[32];
    std::snprintf(name, sizeof(name), "%dx%dx%d", s.m, s.n, s.k);
    std::printf("%-18s %9.1f GF %9.1f GF %8s\n", name, flop / t_ob / 1e9, flop / t_dn / 1e9,
                t_ob <= t_dn ? "openblas" : "onednn");
  }
  return 0;
}
