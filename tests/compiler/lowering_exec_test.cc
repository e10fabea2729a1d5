// Lowerings checked by running them: the compiled module executes and its
// results match a straightforward reference (send/recv as a permute,
// complex acos, nextafter, GetRngSeed, cuDNN int8 and vectorized
// convolutions, bf16 chains with and without mixed-precision accumulation,
// host send/recv as outfeed/infeed).
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "lib/compiler/supported_ops.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/executable.h"
#include "lib/kernels/host_feed.h"
#include "tests/compiler/test_util.h"

namespace neuron::compiler {
namespace {

using kernels::Tensor;
using testing::CompileAndRun;
using testing::CompileText;
using testing::CountOpcode;

constexpr char kSendRecv[] = R"(HloModule sr
ENTRY e {
  p = u32[3] parameter(0)
  tok = token[] after-all()
  recv = (u32[3], u32[], token[]) recv(tok), channel_id=2, frontend_attributes={_xla_send_recv_source_target_pairs="PAIRS"}
  send = (u32[3], u32[], token[]) send(p, tok), channel_id=2, control-predecessors={recv}, frontend_attributes={_xla_send_recv_source_target_pairs="PAIRS"}
  recv-done = (u32[3], token[]) recv-done(recv), channel_id=2
  send-done = token[] send-done(send), channel_id=2, control-predecessors={recv}
  ROOT data = u32[3] get-tuple-element(recv-done), index=0
}
)";

std::string WithPairs(std::string_view pairs) {
  std::string text = kSendRecv;
  for (size_t at; (at = text.find("PAIRS")) != std::string::npos;) text.replace(at, 5, pairs);
  return text;
}

TEST(SendRecvLoweringTest, BecomesACollectivePermute) {
  CompileOptions options;
  absl::StatusOr<CompileResult> r = CompileText(WithPairs("{{0,0}}"), options, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOpcode(*r->module, hlo::Opcode::kSend), 0);
  EXPECT_EQ(CountOpcode(*r->module, hlo::Opcode::kRecvDone), 0);
  EXPECT_EQ(CountOpcode(*r->module, hlo::Opcode::kCollectivePermute), 1);
}

TEST(SendRecvLoweringTest, DataFollowsThePairs) {
  Tensor in(hlo::ElementType::kU32, {3});
  for (int i = 0; i < 3; ++i) reinterpret_cast<uint32_t*>(in.data())[i] = 7 + i;
  // Device 0 sending to itself receives its data.
  auto self = CompileAndRun(WithPairs("{{0,0}}"), {in});
  ASSERT_TRUE(self.ok()) << self.status();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(reinterpret_cast<uint32_t*>((*self)[0].data())[i], 7u + i);
  // Nothing is sent to device 0 from device 0 under {1,0} on one device.
  auto other = CompileAndRun(WithPairs("{{1,0}}"), {in});
  ASSERT_TRUE(other.ok()) << other.status();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(reinterpret_cast<uint32_t*>((*other)[0].data())[i], 0u);
}

TEST(SendRecvLoweringTest, BadPairsAreRefusedByName) {
  CompileOptions options;
  absl::StatusOr<CompileResult> r = CompileText(WithPairs("{{0,x}}"), options, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("_xla_send_recv_source_target_pairs"), std::string::npos) << r.status();
}

// Every target list-operators names is one the compiler knows: it may
// reject a malformed use, but never as an unknown target.
TEST(CustomCallLoweringExecTest, EveryListedTargetIsKnown) {
  for (const std::string& target : LoweredCustomCallTargets()) {
    std::string text = "HloModule t\nENTRY e {\n  p = f32[2,2] parameter(0)\n  ROOT r = f32[2,2] custom-call(p), custom_call_target=\"" +
                       target + "\"\n}\n";
    CompileOptions options;
    absl::StatusOr<CompileResult> r = CompileText(text, options, false);
    if (!r.ok()) {
      EXPECT_EQ(r.status().message().find("NCC-E0202"), std::string::npos) << target << ": " << r.status();
    }
  }
}

TEST(CustomCallLoweringExecTest, ComplexAcosMatchesStd) {
  const std::vector<std::complex<float>> z = {{0.5f, 0}, {2, 1}, {-3, -0.25f}, {0, 4}, {-0.2f, 0.7f}};
  Tensor in(hlo::ElementType::kC64, {static_cast<int64_t>(z.size())});
  std::memcpy(in.data(), z.data(), z.size() * sizeof(z[0]));
  auto out = CompileAndRun(R"(HloModule a
ENTRY e {
  z = c64[5] parameter(0)
  ROOT r = c64[5] custom-call(z), custom_call_target="xla_builder.math.Acos"
})",
                           {in});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto* got = reinterpret_cast<const std::complex<float>*>((*out)[0].data());
  for (size_t i = 0; i < z.size(); ++i) {
    std::complex<float> want = std::acos(z[i]);
    EXPECT_NEAR(got[i].real(), want.real(), 1e-4) << i;
    EXPECT_NEAR(got[i].imag(), want.imag(), 1e-4) << i;
  }
}

template <typename T>
void CheckNextAfter(hlo::ElementType type, const char* name) {
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T den = std::numeric_limits<T>::denorm_min(), big = std::numeric_limits<T>::max();
  const std::vector<std::pair<T, T>> cases = {
      {1, 2},     {1, 0},      {-1, -2},  {-1, 0},   {0, 1},     {0, -1},  {T(-0.0), 1}, {0, T(-0.0)},
      {den, 0},   {-den, 0},   {-den, 1}, {big, inf}, {inf, 0},  {-inf, 0}, {3, 3},      {nan, 1},
      {1, nan},   {T(0.1), -5}, {T(-2.5), 7}, {T(1e-3), T(1e-3)}};
  const int64_t n = static_cast<int64_t>(cases.size());
  Tensor x(type, {n}), y(type, {n});
  for (int64_t i = 0; i < n; ++i) {
    reinterpret_cast<T*>(x.data())[i] = cases[i].first;
    reinterpret_cast<T*>(y.data())[i] = cases[i].second;
  }
  std::string text = std::string("HloModule n\nENTRY e {\n  x = T[N] parameter(0)\n  y = T[N] parameter(1)\n") +
                     "  ROOT r = T[N] custom-call(x, y), custom_call_target=\"xla_builder.math.NextAfter\"\n}\n";
  for (size_t at; (at = text.find("T[N]")) != std::string::npos;) text.replace(at, 4, std::string(name) + "[" + std::to_string(n) + "]");
  auto out = CompileAndRun(text, {x, y});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < n; ++i) {
    T got = reinterpret_cast<const T*>((*out)[0].data())[i];
    T want = std::nextafter(cases[i].first, cases[i].second);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << name << " " << i;
    } else {
      EXPECT_EQ(std::memcmp(&got, &want, sizeof(T)), 0)
          << name << " nextafter(" << cases[i].first << ", " << cases[i].second << ") = " << got << ", want " << want;
    }
  }
}

TEST(CustomCallLoweringExecTest, NextAfterMatchesStd) {
  CheckNextAfter<float>(hlo::ElementType::kF32, "f32");
  CheckNextAfter<double>(hlo::ElementType::kF64, "f64");
}

// A c64 convolution (two images, two input features, two output features,
// padding and stride) against the definition summed term by term.
TEST(ComplexConvolutionExecTest, MatchesTheDefinition) {
  using C = std::complex<double>;
  const int N = 2, CI = 2, W = 5, CO = 2, K = 3, OW = 3;  // pad 1, stride 2
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor x(hlo::ElementType::kC64, {N, W, CI}), k(hlo::ElementType::kC64, {K, CI, CO});
  auto* xd = reinterpret_cast<std::complex<float>*>(x.data());
  auto* kd = reinterpret_cast<std::complex<float>*>(k.data());
  for (int i = 0; i < N * W * CI; ++i) xd[i] = {u(rng), u(rng)};
  for (int i = 0; i < K * CI * CO; ++i) kd[i] = {u(rng), u(rng)};
  auto out = CompileAndRun(R"(HloModule cc
ENTRY e {
  x = c64[2,5,2] parameter(0)
  k = c64[3,2,2] parameter(1)
  ROOT c = c64[2,3,2] convolution(x, k), window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f
})",
                           {x, k});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto* got = reinterpret_cast<const std::complex<float>*>((*out)[0].data());
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OW; ++o)
      for (int f = 0; f < CO; ++f) {
        C want = 0;
        for (int t = 0; t < K; ++t) {
          int w = o * 2 - 1 + t;
          if (w < 0 || w >= W) continue;
          for (int c = 0; c < CI; ++c) want += C(xd[(n * W + w) * CI + c]) * C(kd[(t * CI + c) * CO + f]);
        }
        std::complex<float> g = got[(n * OW + o) * CO + f];
        EXPECT_NEAR(g.real(), want.real(), 1e-5) << n << "," << o << "," << f;
        EXPECT_NEAR(g.imag(), want.imag(), 1e-5) << n << "," << o << "," << f;
      }
}

TEST(CustomCallLoweringExecTest, GetRngSeedIsTheExecutionsSeedEverywhere) {
  kernels::ExecOptions exec;
  exec.rng_seed = 0x123456789abcull;
  auto out = CompileAndRun(R"(HloModule s
sub {
  ROOT s = u64[] custom-call(), custom_call_target="GetRngSeed"
}
ENTRY e {
  a = u64[] custom-call(), custom_call_target="GetRngSeed"
  b = u64[] call(), to_apply=sub
  ROOT t = (u64[], u64[]) tuple(a, b)
})",
                           {}, exec);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(*reinterpret_cast<const uint64_t*>((*out)[0].data()), exec.rng_seed);
  EXPECT_EQ(*reinterpret_cast<const uint64_t*>((*out)[1].data()), exec.rng_seed);
}

// neuron.device_print survives -O2 (even unread) and passes its operand on.
TEST(CustomCallLoweringExecTest, DevicePrintRunsAndPassesItsOperandOn) {
  struct Recorder : kernels::DevicePrinter {
    std::vector<std::string> prefixes;
    std::vector<float> first;
    void Print(const kernels::PrintedTensor& v) override {
      prefixes.emplace_back(v.prefix);
      first.push_back(*reinterpret_cast<const float*>(v.data));
    }
  } printed;
  kernels::ExecOptions exec;
  exec.printer = &printed;
  Tensor in(hlo::ElementType::kF32, {2});
  reinterpret_cast<float*>(in.data())[0] = 3;
  reinterpret_cast<float*>(in.data())[1] = 5;
  auto out = CompileAndRun(R"(HloModule p
ENTRY e {
  x = f32[2] parameter(0)
  unread = f32[2] custom-call(x), custom_call_target="neuron.device_print", backend_config="unread "
  n = f32[2] negate(x)
  shown = f32[2] custom-call(n), custom_call_target="neuron.device_print", backend_config={"prefix":"n="}
  ROOT r = f32[2] add(shown, x)
})",
                           {in}, exec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(reinterpret_cast<const float*>((*out)[0].data())[1], 0.0f);
  ASSERT_EQ(printed.prefixes.size(), 2u);
  EXPECT_EQ(printed.prefixes[0], "unread ");
  EXPECT_EQ(printed.first[0], 3.0f);
  EXPECT_EQ(printed.prefixes[1], "n=");
  EXPECT_EQ(printed.first[1], -3.0f);
}

// Reference int8 convolution, NHWC input, OHWI filter, SAME padding for a
// 3x3 window, f32 accumulation, + bias, relu, round and saturate.
std::vector<int8_t> ReferenceConv(const std::vector<int8_t>& x, const std::vector<int8_t>& w,
                                  const std::vector<float>& bias, int n, int h, int wd, int c, int o) {
  std::vector<int8_t> out(static_cast<size_t>(n) * h * wd * o);
  for (int b = 0; b < n; ++b)
    for (int y = 0; y < h; ++y)
      for (int xx = 0; xx < wd; ++xx)
        for (int oc = 0; oc < o; ++oc) {
          float acc = 0;
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              int iy = y + ky - 1, ix = xx + kx - 1;
              if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
              for (int ic = 0; ic < c; ++ic)
                acc += float(x[((b * h + iy) * wd + ix) * c + ic]) * float(w[((oc * 3 + ky) * 3 + kx) * c + ic]);
            }
          float v = std::max(acc + bias[oc], 0.0f);
          v = std::nearbyint(v);
          out[((b * h + y) * wd + xx) * o + oc] = static_cast<int8_t>(std::clamp(v, -128.0f, 127.0f));
        }
  return out;
}

TEST(CustomCallLoweringExecTest, CudnnInt8ConvWithF32BiasSaturates) {
  const int n = 1, h = 4, wd = 5, c = 8, o = 8;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> x(n * h * wd * c), w(o * 9 * c);
  std::vector<float> bias(o);
  for (auto& v : x) v = static_cast<int8_t>(dist(rng));
  for (auto& v : w) v = static_cast<int8_t>(dist(rng) / 16);
  for (int i = 0; i < o; ++i) bias[i] = i * 3.25f - 10;
  Tensor tx(hlo::ElementType::kS8, {n, h, wd, c}), tw(hlo::ElementType::kS8, {o, 3, 3, c}), tb(hlo::ElementType::kF32, {o});
  std::memcpy(tx.data(), x.data(), x.size());
  std::memcpy(tw.data(), w.data(), w.size());
  std::memcpy(tb.data(), bias.data(), bias.size() * 4);
  std::vector<int8_t> want = ReferenceConv(x, w, bias, n, h, wd, c, o);

  auto plain = CompileAndRun(R"(HloModule c
ENTRY e {
  x = s8[1,4,5,8] parameter(0)
  w = s8[8,3,3,8] parameter(1)
  b = f32[8] parameter(2)
  cc = (s8[1,4,5,8], u8[0]) custom-call(x, w, b), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config="{\"cudnn_conv_backend_config\":{\"activation_mode\":\"2\",\"conv_result_scale\":1}}"
  ROOT r = s8[1,4,5,8] get-tuple-element(cc), index=0
})",
                             {tx, tw, tb});
  ASSERT_TRUE(plain.ok()) << plain.status();
  const auto* got = reinterpret_cast<const int8_t*>((*plain)[0].data());
  int saturated = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << i;
    saturated += want[i] == 127;
  }
  EXPECT_GT(saturated, 0);  // the data exercises saturation

  // The same convolution with the features in vectors of 4 lanes.
  auto vect = CompileAndRun(R"(HloModule v
ENTRY e {
  x = s8[1,4,5,8] parameter(0)
  w = s8[8,3,3,8] parameter(1)
  b = f32[8] parameter(2)
  xv = s8[1,4,5,2,4] reshape(x)
  wv = s8[8,3,3,2,4] reshape(w)
  cc = (s8[1,4,5,2,4], u8[0]) custom-call(xv, wv, b), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config="{\"cudnn_conv_backend_config\":{\"activation_mode\":\"2\",\"conv_result_scale\":1}}"
  g = s8[1,4,5,2,4] get-tuple-element(cc), index=0
  ROOT r = s8[1,4,5,8] reshape(g)
})",
                            {tx, tw, tb});
  ASSERT_TRUE(vect.ok()) << vect.status();
  EXPECT_EQ(std::memcmp((*vect)[0].data(), want.data(), want.size()), 0);
}

// bf16 rounded the way the interpreter rounds: nearest, ties to even.
float RoundBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return x;
}

// (x + 1) * 3 - 3: with mixed-precision accumulation (the default) the
// fused chain rounds once, at its end; without it, after every op, and the
// low bits of a small x are lost at the first add.
TEST(FusedPrecisionTest, Bf16ChainRoundsOnceWithMixedAccumulationAndPerOpWithout) {
  constexpr char kChain[] = R"(HloModule chain
ENTRY e {
  x = bf16[6] parameter(0)
  one = bf16[] constant(1)
  three = bf16[] constant(3)
  ob = bf16[6] broadcast(one), dimensions={}
  tb = bf16[6] broadcast(three), dimensions={}
  a = bf16[6] add(x, ob)
  m = bf16[6] multiply(a, tb)
  ROOT s = bf16[6] subtract(m, tb)
})";
  const std::vector<float> x = {0.00390625f, 0.01171875f, -0.0078125f, 0.3f, 5.5f, 100.0f};
  Tensor in(hlo::ElementType::kBF16, {6});
  kernels::StoreFromDomain(hlo::ElementType::kBF16, x.data(), 6, static_cast<uint8_t*>(in.data()));
  std::vector<float> xs(6);  // x as bf16 holds it
  kernels::LoadToDomain(hlo::ElementType::kBF16, static_cast<const uint8_t*>(in.data()), 6, xs.data());
  for (bool mixed : {true, false}) {
    CompileOptions options;
    options.mixed_precision_accumulation = mixed;
    absl::StatusOr<std::vector<Tensor>> out = CompileAndRun(kChain, {in}, {}, options);
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> got(6);
    kernels::LoadToDomain(hlo::ElementType::kBF16, static_cast<const uint8_t*>((*out)[0].data()), 6, got.data());
    for (int i = 0; i < 6; ++i) {
      const float want = mixed ? RoundBf16((xs[i] + 1.0f) * 3.0f - 3.0f)
                               : RoundBf16(RoundBf16(RoundBf16(xs[i] + 1.0f) * 3.0f) - 3.0f);
      EXPECT_EQ(got[i], want) << "x=" << xs[i] << (mixed ? " (mixed)" : " (per op)");
    }
  }
  // The first lane tells the two apart: 2^-8 survives only in f32.
  EXPECT_NE(RoundBf16((xs[0] + 1.0f) * 3.0f - 3.0f),
            RoundBf16(RoundBf16(RoundBf16(xs[0] + 1.0f) * 3.0f) - 3.0f));
}

// The host side of infeed/outfeed: hands out s32 values from `next` up and
// keeps what it is given.
class CountingFeed : public kernels::HostFeed {
 public:
  absl::Status Infeed(const std::string&, const hlo::Shape& shape, uint8_t* out, size_t bytes) override {
    if (shape.type != hlo::ElementType::kS32) return absl::InvalidArgumentError("s32 only");
    for (size_t i = 0; i < bytes / 4; ++i) {
      const int32_t v = next++;
      std::memcpy(out + 4 * i, &v, 4);
    }
    return absl::OkStatus();
  }
  absl::Status Outfeed(const std::string&, const hlo::Shape&, const uint8_t* data, size_t bytes) override {
    std::vector<int32_t> v(bytes / 4);
    std::memcpy(v.data(), data, bytes);
    written.push_back(v);
    return absl::OkStatus();
  }
  int32_t next = 100;
  std::vector<std::vector<int32_t>> written;
};

// A host send hands its operand to the host and a host recv takes the next
// value from it, in program order, as outfeed and infeed do.
TEST(HostTransferTest, HostSendAndRecvGoThroughTheHostFeed) {
  constexpr char kHost[] = R"(HloModule host
ENTRY e {
  x = s32[3] parameter(0)
  t0 = token[] after-all()
  send = (s32[3], u32[], token[]) send(x, t0), channel_id=3, is_host_transfer=true
  sent = token[] send-done(send), channel_id=3, is_host_transfer=true
  recv = (s32[2], u32[], token[]) recv(sent), channel_id=5, is_host_transfer=true
  got = (s32[2], token[]) recv-done(recv), channel_id=5, is_host_transfer=true
  v = s32[2] get-tuple-element(got), index=0
  two = s32[] constant(2)
  tb = s32[2] broadcast(two), dimensions={}
  ROOT r = s32[2] multiply(v, tb)
})";
  Tensor x(hlo::ElementType::kS32, {3});
  const int32_t xs[3] = {4, -5, 6};
  std::memcpy(x.data(), xs, sizeof(xs));
  CountingFeed feed;
  kernels::ExecOptions exec;
  exec.feed = &feed;
  absl::StatusOr<std::vector<Tensor>> out = CompileAndRun(kHost, {x}, exec);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(feed.written.size(), 1u);
  EXPECT_EQ(feed.written[0], (std::vector<int32_t>{4, -5, 6}));
  int32_t r[2];
  std::memcpy(r, (*out)[0].data(), sizeof(r));
  EXPECT_EQ(r[0], 200);
  EXPECT_EQ(r[1], 202);
  // Without a feed, the run says what to give instead of guessing.
  absl::StatusOr<std::vector<Tensor>> none = CompileAndRun(kHost, {x});
  EXPECT_FALSE(none.ok());
}

// A device recv of no data (an empty tuple) and a send of zero elements
// need no peer: nothing moves.
TEST(HostTransferTest, DeviceTransfersOfNoDataMoveNothing) {
  absl::StatusOr<std::vector<Tensor>> out = CompileAndRun(R"(HloModule empty
ENTRY e {
  a = f32[2] parameter(0)
  t0 = token[] after-all()
  recv = ((), u32[], token[]) recv(t0), channel_id=5
  got = ((), token[]) recv-done(recv), channel_id=5
  t1 = token[] get-tuple-element(got), index=1
  z = f32[0] constant({})
  send = (f32[0], u32[], token[]) send(z, t1), channel_id=6
  sent = token[] send-done(send), channel_id=6
  ROOT n = f32[2] negate(a)
})", {Tensor(hlo::ElementType::kF32, {2})});
  ASSERT_TRUE(out.ok()) << out.status();
  // One that carries data and has no peer in the module is refused.
  CompileOptions options;
  absl::StatusOr<CompileResult> lone = testing::CompileText(R"(HloModule lone
ENTRY e {
  t0 = token[] after-all()
  recv = (f32[2], u32[], token[]) recv(t0), channel_id=5
  got = (f32[2], token[]) recv-done(recv), channel_id=5
  ROOT v = f32[2] get-tuple-element(got), index=0
})", options, /*emit_neff=*/false);
  EXPECT_FALSE(lone.ok());
}

}  // namespace
}  // namespace neuron::compiler
