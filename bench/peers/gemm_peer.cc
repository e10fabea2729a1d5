// The GEMM library's own time for the three 256x1024x1024 products of the
// MLP benchmark: oneDNN's sgemm, the library lib/kernels calls for f32
// products, on THREADS OpenMP threads (the runtime's two), best of N runs.
// Prints microseconds for the three products together.
// Usage: gemm_peer [THREADS] [RUNS]
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 50;
  omp_set_num_threads(threads);
  const int batch = 256, width = 1024;
  std::vector<float> x(batch * width, 0.5f), h1(batch * width), h2(batch * width),
      out(batch * width);
  std::vector<std::vector<float>> w(3, std::vector<float>(width * width, 0.001f));
  const float* in[3] = {x.data(), h1.data(), h2.data()};
  float* res[3] = {h1.data(), h2.data(), out.data()};
  auto products = [&] {
    for (int l = 0; l < 3; ++l) {
      // Row-major C = A x B, as the executor calls it.
      if (dnnl_sgemm('N', 'N', batch, width, width, 1.0f, in[l], width, w[l].data(), width,
                     0.0f, res[l], width) != dnnl_success) {
        std::fprintf(stderr, "gemm_peer: dnnl_sgemm failed\n");
        std::exit(1);
      }
    }
  };
  for (int r = 0; r < 5; ++r) products();  // oneDNN builds its kernels on first use
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    products();
    best = std::min(best, std::chrono::duration<double, std::micro>(
                              std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%.1f\n", best);
  return 0;
}
