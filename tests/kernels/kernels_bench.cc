// Times the executor on the three shapes the performance goals name: a
// 3-layer 1024-wide f32 MLP at batch 256 (vs the GEMM library alone), a
// 10-op elementwise chain over 64 MiB, and a 4-element add executed
// 100,000 times. Prints milliseconds / microseconds; no thresholds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lib/hlo/load.h"
#include "lib/kernels/executable.h"
#include "lib/kernels/gemm.h"

namespace {

using neuron::kernels::ExecOptions;
using neuron::kernels::Executable;
using neuron::kernels::Tensor;
using ET = neuron::hlo::ElementType;

std::unique_ptr<Executable> Build(const std::string& text) {
  auto m = neuron::hlo::LoadModule(text, "bench");
  if (!m.ok()) { std::fprintf(stderr, "%s\n", std::string(m.status().message()).c_str()); std::exit(1); }
  auto e = Executable::Build(**m);
  if (!e.ok()) { std::fprintf(stderr, "%s\n", std::string(e.status().message()).c_str()); std::exit(1); }
  return std::move(*e);
}

template <typename F>
double BestMs(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  ExecOptions opts;
  opts.threads = argc > 1 ? std::atoi(argv[1]) : 2;
  bool chain_only = argc > 2;
  // MLP.
  std::string mlp = R"(HloModule mlp
ENTRY e {
  x = f32[256,1024] parameter(0)
  w1 = f32[1024,1024] parameter(1)
  w2 = f32[1024,1024] parameter(2)
  w3 = f32[1024,1024] parameter(3)
  h1 = f32[256,1024] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  zb = f32[256,1024] broadcast(z), dimensions={}
  r1 = f32[256,1024] maximum(h1, zb)
  h2 = f32[256,1024] dot(r1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r2 = f32[256,1024] maximum(h2, zb)
  ROOT h3 = f32[256,1024] dot(r2, w3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  if (!chain_only) {
  auto exe = Build(mlp);
  std::vector<Tensor> in = {Tensor(ET::kF32, {256, 1024}), Tensor(ET::kF32, {1024, 1024}),
                            Tensor(ET::kF32, {1024, 1024}), Tensor(ET::kF32, {1024, 1024})};
  std::vector<Tensor> out;
  double t_mlp = BestMs(10, [&] { (void)exe->Run(in, &out, opts); });
  neuron::kernels::SetGemmThreads(2);
  std::vector<float> c(256 * 1024);
  double t_gemm = BestMs(10, [&] {
    for (int l = 0; l < 3; ++l)
      neuron::kernels::Sgemm(false, false, 256, 1024, 1024, in[0].as<float>(), 1024,
                             in[1].as<float>(), 1024, c.data(), 1024);
  });
  std::printf("mlp 3x(256x1024x1024): executor %.2f ms, gemm alone %.2f ms, ratio %.2f\n", t_mlp,
              t_gemm, t_mlp / t_gemm);
  }
  std::vector<Tensor> out;
  // Elementwise chain over 64 MiB of f32 (16M elements): GELU(tanh) * s + b.
  std::string chain = R"(HloModule chain
fused {
  x = f32[16777216] parameter(0)
  c0 = f32[] constant(0.044715)
  c1 = f32[] constant(0.7978845608)
  h = f32[] constant(0.5)
  one = f32[] constant(1)
  s = f32[] constant(1.5)
  b = f32[] constant(0.25)
  bc0 = f32[16777216] broadcast(c0), dimensions={}
  bc1 = f32[16777216] broadcast(c1), dimensions={}
  bh = f32[16777216] broadcast(h), dimensions={}
  bone = f32[16777216] broadcast(one), dimensions={}
  bs = f32[16777216] broadcast(s), dimensions={}
  bb = f32[16777216] broadcast(b), dimensions={}
  x2 = f32[16777216] multiply(x, x)
  x3 = f32[16777216] multiply(x2, x)
  t0 = f32[16777216] multiply(x3, bc0)
  t1 = f32[16777216] add(x, t0)
  t2 = f32[16777216] multiply(t1, bc1)
  t3 = f32[16777216] tanh(t2)
  t4 = f32[16777216] add(t3, bone)
  t5 = f32[16777216] multiply(x, bh)
  g = f32[16777216] multiply(t5, t4)
  gs = f32[16777216] multiply(g, bs)
  ROOT r = f32[16777216] add(gs, bb)
}
ENTRY e {
  p = f32[16777216] parameter(0)
  ROOT f = f32[16777216] fusion(p), kind=kLoop, calls=fused
})";
  auto ce = Build(chain);
  std::vector<Tensor> cin = {Tensor(ET::kF32, {16777216})};
  double t_chain = BestMs(5, [&] { (void)ce->Run(cin, &out, opts); });
  std::printf("elementwise chain 64 MiB: %.2f ms, %.1f GB/s (read+write)\n", t_chain,
              2 * 64.0 * 1048576 / (t_chain * 1e-3) / 1e9);
  // Tiny add.
  std::string tiny = R"(HloModule tiny
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT r = f32[4] add(a, b)
})";
  auto te = Build(tiny);
  std::vector<Tensor> tin = {Tensor(ET::kF32, {4}), Tensor(ET::kF32, {4})};
  (void)te->Run(tin, &out, opts);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 100000; ++i) (void)te->Run(tin, &out, opts);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 100000;
  std::printf("4-element add: %.3f us per execution\n", us);
  return 0;
}
