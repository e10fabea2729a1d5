// STREAM triad, a[i] = b[i] + s * c[i] over doubles, on THREADS threads,
// best of RUNS; prints GB/s (1e9 bytes) counting 24 bytes per element, as
// STREAM does. Usage: stream_triad [THREADS] [RUNS] [MiB per array]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 10;
  const size_t mib = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 256;
  const size_t n = mib * (1 << 20) / sizeof(double);
  std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
  const double s = 3.0;
  auto part = [&](int t, auto&& fn) {
    std::vector<std::thread> pool;
    for (int i = 0; i < t; ++i) {
      pool.emplace_back([&, i] { fn(n * i / t, n * (i + 1) / t); });
    }
    for (auto& th : pool) th.join();
  };
  part(threads, [&](size_t lo, size_t hi) { std::fill(a.begin() + lo, a.begin() + hi, 0.0); });
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    part(threads, [&](size_t lo, size_t hi) {
      double* __restrict pa = a.data();
      const double* __restrict pb = b.data();
      const double* __restrict pc = c.data();
      for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
    });
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%.2f\n", 24.0 * static_cast<double>(n) / best / 1e9);
  return 0;
}
