// oneDNN's own time for one convolution layer, the library lib/kernels
// calls for convolutions: plain NCHW operands reordered into the
// primitive's layouts and the result back, as the runtime does, on THREADS
// OpenMP threads, best of RUNS. Prints microseconds.
// Usage: conv_peer f32|bf16 N C H W O KH KW [THREADS] [RUNS]   (padding keeps H x W)
#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 9) {
    std::fprintf(stderr, "usage: conv_peer f32|bf16 N C H W O KH KW [THREADS] [RUNS]\n");
    return 2;
  }
  using namespace dnnl;
  const auto type = std::strcmp(argv[1], "bf16") == 0 ? memory::data_type::bf16 : memory::data_type::f32;
  const memory::dim n = std::atol(argv[2]), c = std::atol(argv[3]), h = std::atol(argv[4]),
                    w = std::atol(argv[5]), o = std::atol(argv[6]), kh = std::atol(argv[7]),
                    kw = std::atol(argv[8]);
  omp_set_num_threads(argc > 9 ? std::atoi(argv[9]) : 2);
  const int runs = argc > 10 ? std::atoi(argv[10]) : 20;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  const memory::dims xd = {n, c, h, w}, wd = {o, c, kh, kw}, yd = {n, o, h, w};
  const auto any = memory::format_tag::any;
  convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
                              memory::desc(xd, type, any), memory::desc(wd, type, any),
                              memory::desc(yd, memory::data_type::f32, any), {1, 1}, {kh / 2, kw / 2},
                              {(kh - 1) / 2, (kw - 1) / 2});
  convolution_forward::primitive_desc pd(d, eng);
  memory x({xd, type, memory::format_tag::nchw}, eng), k({wd, type, memory::format_tag::oihw}, eng),
      y({yd, memory::data_type::f32, memory::format_tag::nchw}, eng);
  // Values as neuron-exec --random-inputs draws them (uniform in [-1, 1]),
  // so neither side runs on special values such as all zeros.
  auto fill = [&](memory& m) {
    const size_t count = m.get_desc().get_size() / (type == memory::data_type::bf16 ? 2 : 4);
    uint32_t state = 12345;
    for (size_t i = 0; i < count; ++i) {
      state = state * 1664525u + 1013904223u;
      const float v = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
      if (type == memory::data_type::bf16) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        const uint16_t top = static_cast<uint16_t>(bits >> 16);
        std::memcpy(static_cast<char*>(m.get_data_handle()) + 2 * i, &top, 2);
      } else {
        std::memcpy(static_cast<char*>(m.get_data_handle()) + 4 * i, &v, 4);
      }
    }
  };
  fill(x);
  fill(k);
  memory xc(pd.src_desc(), eng), kc(pd.weights_desc(), eng), yc(pd.dst_desc(), eng);
  convolution_forward conv(pd);
  reorder rx(x, xc), rk(k, kc), ry(yc, y);
  auto layer = [&] {
    rx.execute(s, x, xc);
    rk.execute(s, k, kc);
    conv.execute(s, {{DNNL_ARG_SRC, xc}, {DNNL_ARG_WEIGHTS, kc}, {DNNL_ARG_DST, yc}});
    ry.execute(s, yc, y);
    s.wait();
  };
  for (int r = 0; r < 3; ++r) layer();
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    layer();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%.1f\n", best);
  return 0;
}
