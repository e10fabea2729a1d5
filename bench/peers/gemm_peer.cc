// The GEMM library's own time for the three 256x1024x1024 products of the
// MLP benchmark (OpenBLAS, the library lib/kernels calls), best of N runs.
// Prints microseconds for the three products together.
// Usage: gemm_peer [THREADS] [RUNS]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" void openblas_set_num_threads(int);

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 50;
  openblas_set_num_threads(threads);
  const int batch = 256, width = 1024;
  std::vector<float> x(batch * width, 0.5f), h1(batch * width), h2(batch * width),
      out(batch * width);
  std::vector<std::vector<float>> w(3, std::vector<float>(width * width, 0.001f));
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const float* in[3] = {x.data(), h1.data(), h2.data()};
    float* res[3] = {h1.data(), h2.data(), out.data()};
    for (int l = 0; l < 3; ++l) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, width, width, 1.0f, in[l],
                  width, w[l].data(), width, 0.0f, res[l], width);
    }
    best = std::min(best, std::chrono::duration<double, std::micro>(
                              std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%.1f\n", best);
  return 0;
}
