// Executor behaviour: timeouts and cancellation, NaN/Inf reporting,
// input validation, unsupported operators, repeated executions.
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels::testing {
namespace {

using ET = hlo::ElementType;

const char* kEndlessLoop = R"(HloModule endless
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  z = s32[] constant(0)
  ROOT c = pred[] compare(i, z), direction=GE
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  n = s32[] add(i, one)
  zero = s32[] constant(0)
  m = s32[] maximum(n, zero)
  v = f32[4] get-tuple-element(p), index=1
  ROOT t = (s32[], f32[4]) tuple(m, v)
}
ENTRY e {
  x = f32[4] parameter(0)
  start = s32[] constant(0)
  init = (s32[], f32[4]) tuple(start, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
})";

TEST(ExecutorTest, EndlessWhileTimesOutAndExecutableStaysUsable) {
  auto exe = BuildText(kEndlessLoop);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<Tensor> in = {MakeTensor(ET::kF32, {4}, {1, 2, 3, 4})}, out;
  ExecOptions o;
  auto start = std::chrono::steady_clock::now();
  o.deadline = start + std::chrono::milliseconds(100);
  absl::Status s = (*exe)->Run(in, &out, o);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(took, std::chrono::seconds(5));  // generous slack: shared machine
  // Cancellation works the same way, and the executable still runs.
  std::atomic<bool> cancel{true};
  ExecOptions c;
  c.cancel = &cancel;
  EXPECT_EQ((*exe)->Run(in, &out, c).code(), absl::StatusCode::kCancelled);
}

TEST(ExecutorTest, RunsAgainAfterTimeout) {
  const char* text = R"(HloModule counted
cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  lim = s32[] constant(5)
  ROOT c = pred[] compare(i, lim), direction=LT
}
body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  n = s32[] add(i, one)
  v = f32[2] get-tuple-element(p), index=1
  two = f32[] constant(2)
  b = f32[2] broadcast(two), dimensions={}
  m = f32[2] multiply(v, b)
  ROOT t = (s32[], f32[2]) tuple(n, m)
}
ENTRY e {
  x = f32[2] parameter(0)
  start = s32[] constant(0)
  init = (s32[], f32[2]) tuple(start, x)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w), index=1
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<Tensor> in = {MakeTensor(ET::kF32, {2}, {1, -3})}, out;
  ExecOptions expired;
  expired.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  EXPECT_EQ((*exe)->Run(in, &out, expired).code(), absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<double>{32, -96}));
  // Twice more: buffers are reused and results do not leak between runs.
  in[0] = MakeTensor(ET::kF32, {2}, {0.5, 1});
  ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
  EXPECT_EQ(Values(out[0]), (std::vector<double>{16, 32}));
}

TEST(ExecutorTest, ReportsNonFiniteAndFirstProducer) {
  const char* text = R"(HloModule nan
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ok = f32[3] add(a, b)
  q = f32[3] divide(a, b)
  l = f32[3] log(q)
  ROOT r = f32[3] multiply(l, ok)
})";
  // 0/0 = NaN appears first in q.
  std::vector<Tensor> in = {MakeTensor(ET::kF32, {3}, {0, 1, 2}), MakeTensor(ET::kF32, {3}, {0, 1, 1})};
  RunStats stats;
  ExecOptions o;
  o.find_first_nonfinite = true;
  auto r = RunText(text, in, o, &stats);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(stats.has_nonfinite);
  EXPECT_EQ(stats.first_nonfinite_instruction, "q");
  // Without NaN: nothing reported.
  in[0] = MakeTensor(ET::kF32, {3}, {1, 1, 2});
  in[1] = MakeTensor(ET::kF32, {3}, {1, 1, 1});
  r = RunText(text, in, o, &stats);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(stats.has_nonfinite);
  EXPECT_TRUE(stats.first_nonfinite_instruction.empty());
}

// An output too big for one thread's scan (a transpose does not track
// non-finite values itself): a NaN in either half, or none, is told apart.
TEST(ExecutorTest, NonFiniteAnywhereInALargeOutputIsSeen) {
  const char* text = R"(HloModule big
ENTRY e {
  a = f32[1280,1024] parameter(0)
  ROOT t = f32[1024,1280] transpose(a), dimensions={1,0}
})";
  const int64_t n = 1280 * 1024;
  for (int64_t bad : {int64_t{-1}, int64_t{3}, n / 2 + 7, n - 1}) {
    std::vector<double> values(n, 0.5);
    if (bad >= 0) values[bad] = std::numeric_limits<double>::infinity();
    std::vector<Tensor> in = {MakeTensor(ET::kF32, {1280, 1024}, values)};
    RunStats stats;
    auto r = RunText(text, in, ExecOptions{}, &stats);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(stats.has_nonfinite, bad >= 0) << "non-finite at " << bad;
  }
}

TEST(ExecutorTest, CountsTheOutermostLoopsTrips) {
  // An outer loop of `n` trips whose body runs an inner loop of 5: the
  // stats count the outer loop's trips (a generate loop's tokens).
  const char* text = R"(HloModule m
inner_cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  five = s32[] constant(5)
  ROOT lt = pred[] compare(i, five), direction=LT
}
inner_body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[2] get-tuple-element(s), index=1
  w = f32[2] add(v, v)
  ROOT t = (s32[], f32[2]) tuple(j, w)
}
outer_cond {
  s = (s32[], s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
outer_body {
  s = (s32[], s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[2] get-tuple-element(s), index=2
  z = s32[] constant(0)
  init = (s32[], f32[2]) tuple(z, v)
  l = (s32[], f32[2]) while(init), condition=inner_cond, body=inner_body
  w = f32[2] get-tuple-element(l), index=1
  ROOT t = (s32[], s32[], f32[2]) tuple(j, n, w)
}
ENTRY e {
  n = s32[] parameter(0)
  x = f32[2] parameter(1)
  z = s32[] constant(0)
  init = (s32[], s32[], f32[2]) tuple(z, n, x)
  l = (s32[], s32[], f32[2]) while(init), condition=outer_cond, body=outer_body
  ROOT r = f32[2] get-tuple-element(l), index=2
})";
  for (int n : {0, 1, 3}) {
    std::vector<Tensor> in = {MakeTensor(ET::kS32, {}, {static_cast<double>(n)}), MakeTensor(ET::kF32, {2}, {1, 2})};
    RunStats stats;
    stats.loop_trips = -1;
    auto r = RunText(text, in, ExecOptions{}, &stats);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(stats.loop_trips, n);
    EXPECT_EQ(stats.loop_ns > 0, n > 0) << stats.loop_ns;
    // 2^(5n) times the input: the inner loop ran 5 trips per outer one.
    EXPECT_EQ(Values((*r)[0])[1], 2.0 * std::pow(2.0, 5 * n));
  }
  // No loop at all: none counted.
  RunStats stats;
  auto r = RunText("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n",
                   {MakeTensor(ET::kF32, {2}, {1, 2})}, ExecOptions{}, &stats);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(stats.loop_trips, 0);
  EXPECT_EQ(stats.loop_ns, 0);
}

TEST(ExecutorTest, RejectsWrongInputs) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok());
  std::vector<Tensor> out;
  std::vector<Tensor> none;
  EXPECT_EQ((*exe)->Run(none, &out, {}).code(), absl::StatusCode::kInvalidArgument);
  std::vector<Tensor> wrong = {MakeTensor(ET::kF32, {3}, {1, 2, 3})};
  absl::Status s = (*exe)->Run(wrong, &out, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("f32[2]"), std::string::npos) << s;
}

TEST(ExecutorTest, UnsupportedOperatorsAreNamed) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(a), custom_call_target="my_secret_kernel"
})";
  auto exe = BuildText(text);
  ASSERT_FALSE(exe.ok());
  std::string msg(exe.status().message());
  EXPECT_NE(msg.find("my_secret_kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("%c"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'e'"), std::string::npos) << msg;
}

TEST(ExecutorTest, SmallExecutionsReuseEverything) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT r = f32[4] add(a, b)
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok());
  std::vector<Tensor> in = {MakeTensor(ET::kF32, {4}, {1, 2, 3, 4}), MakeTensor(ET::kF32, {4}, {1, 1, 1, 1})};
  std::vector<Tensor> out;
  ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
  const uint8_t* first = out[0].data();
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
  EXPECT_EQ(out[0].data(), first);  // outputs written in place
  EXPECT_EQ(Values(out[0]), (std::vector<double>{2, 3, 4, 5}));
  MemoryUsage m = (*exe)->memory();
  EXPECT_EQ(m.inputs, 32);
  EXPECT_EQ(m.outputs, 16);
}

// Weights the runtime reports unchanged (the same input versions, call
// after call) may have their reorders kept by the kernels; the model's
// other steps reuse the same workspace meanwhile. Every execution of two
// convolutions in a row gives the first execution's result.
TEST(ExecutorTest, RepeatedExecutionsWithUnchangedWeightsGiveTheSameResult) {
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[2,8,16,16] parameter(0)
  w1 = f32[16,8,3,3] parameter(1)
  w2 = f32[8,16,3,3] parameter(2)
  c1 = f32[2,16,16,16] convolution(x, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  ROOT c2 = f32[2,8,16,16] convolution(c1, w2), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto filled = [](std::vector<int64_t> dims, int salt) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7 + salt) % 9) / 4 - 1;
    return MakeTensor(ET::kF32, dims, v);
  };
  std::vector<Tensor> in = {filled({2, 8, 16, 16}, 1), filled({16, 8, 3, 3}, 2), filled({8, 16, 3, 3}, 3)};
  const uint64_t versions[] = {11, 12, 13};
  ExecOptions o;
  o.input_versions = versions;
  std::vector<Tensor> out;
  ASSERT_TRUE((*exe)->Run(in, &out, o).ok());
  const std::vector<double> first = Values(out[0]);
  for (int call = 1; call < 4; ++call) {
    ASSERT_TRUE((*exe)->Run(in, &out, o).ok());
    ASSERT_EQ(Values(out[0]), first) << "execution " << call + 1;
  }
}

TEST(ExecutorTest, IntermediatesShareMemoryWhenLifetimesDoNotOverlap) {
  // Four 1 MiB intermediates in a chain: at most two are alive at once.
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[262144] parameter(0)
  b = f32[262144] negate(a)
  c = f32[262144] exponential(b)
  d = f32[262144] negate(c)
  e = f32[262144] abs(d)
  ROOT f = f32[262144] negate(e)
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok()) << exe.status();
  MemoryUsage m = (*exe)->memory();
  EXPECT_LE(m.intermediates, 3 * 1048576 + 4096) << m.intermediates;
  EXPECT_GE(m.intermediates, 2 * 1048576);
  std::vector<Tensor> in = {MakeTensor(ET::kF32, {262144}, std::vector<double>(262144, 0.5))}, out;
  ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
  EXPECT_FLOAT_EQ(static_cast<float>(Values(out[0])[262143]), -std::exp(-0.5f));
}

TEST(ExecutorTest, CalledComputationsShareTheCallersArena) {
  // heavy's three 256 KiB buffers join the entry's arena: the second call
  // reuses the first call's. `kept` is x passed through a call: x must
  // outlive both heavy calls, or their buffers would overwrite it.
  const char* text = R"(HloModule m
heavy {
  p = f32[65536] parameter(0)
  b = f32[65536] negate(p)
  c = f32[65536] exponential(b)
  ROOT d = f32[65536] negate(c)
}
id {
  ROOT q = f32[65536] parameter(0)
}
ENTRY e {
  a = f32[65536] parameter(0)
  x = f32[65536] negate(a)
  kept = f32[65536] call(x), to_apply=id
  h1 = f32[65536] call(a), to_apply=heavy
  h2 = f32[65536] call(h1), to_apply=heavy
  ROOT s = f32[65536] add(h2, kept)
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok()) << exe.status();
  constexpr int64_t kBuf = 65536 * 4;
  MemoryUsage m = (*exe)->memory();
  // Apart: x, then 3 buffers per call (7 in all). Shared: x, h1 and at
  // most three of the second call's at once.
  EXPECT_LE(m.intermediates, 5 * kBuf + 4096) << m.intermediates;
  std::vector<Tensor> in = {MakeTensor(ET::kF32, {65536}, std::vector<double>(65536, 0.5))}, out;
  ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
  const float h1 = -std::exp(-0.5f), h2 = -std::exp(-h1);
  const std::vector<double> got = Values(out[0]);
  for (size_t i = 0; i < got.size(); i += 4099) ASSERT_FLOAT_EQ(static_cast<float>(got[i]), h2 - 0.5f) << i;
}

TEST(ExecutorTest, LoopStateIsHeldOnceAndSharesTheArena) {
  // The state (256 KiB) is updated in one buffer that lives only while the
  // loop's result is read; the body's result takes one more. Before: two
  // state buffers of their own besides the body's result.
  const char* text = R"(HloModule m
cond {
  c = (s32[], f32[65536]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  b = (s32[], f32[65536]) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[65536] get-tuple-element(b), index=1
  two = f32[] constant(2)
  twos = f32[65536] broadcast(two), dimensions={}
  w = f32[65536] multiply(v, twos)
  ROOT t = (s32[], f32[65536]) tuple(j, w)
}
ENTRY e {
  a = f32[65536] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[65536]) tuple(zero, a)
  loop = (s32[], f32[65536]) while(init), condition=cond, body=body
  r = f32[65536] get-tuple-element(loop), index=1
  ROOT s = f32[65536] negate(r)
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok()) << exe.status();
  constexpr int64_t kBuf = 65536 * 4;
  EXPECT_LE((*exe)->memory().intermediates, 2 * kBuf + 4096) << (*exe)->memory().intermediates;
  std::vector<Tensor> in = {MakeTensor(ET::kF32, {65536}, std::vector<double>(65536, 0.25))}, out;
  ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
  const std::vector<double> got = Values(out[0]);
  for (size_t i = 0; i < got.size(); i += 4099) ASSERT_DOUBLE_EQ(got[i], -2.0) << i;
}

TEST(ExecutorTest, LoopBodyTemporariesShareTheCallersArena) {
  // `pre` (1 MiB) dies before the loop; the body's two 1 MiB temporaries
  // run in its bytes and the state's, not in an arena of their own, and
  // the state (live from the loop's start) is never overwritten by them.
  const char* text = R"(HloModule m
cond {
  c = (s32[], f32[262144]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  b = (s32[], f32[262144]) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[262144] get-tuple-element(b), index=1
  t1 = f32[262144] negate(v)
  t2 = f32[262144] exponential(t1)
  w = f32[262144] add(t2, v)
  ROOT t = (s32[], f32[262144]) tuple(j, w)
}
ENTRY e {
  a = f32[262144] parameter(0)
  pre = f32[262144] negate(a)
  x = f32[262144] negate(pre)
  zero = s32[] constant(0)
  init = (s32[], f32[262144]) tuple(zero, x)
  loop = (s32[], f32[262144]) while(init), condition=cond, body=body
  r = f32[262144] get-tuple-element(loop), index=1
  ROOT s = f32[262144] negate(r)
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok()) << exe.status();
  constexpr int64_t kBuf = 262144 * 4;
  // Apart, the body needed three buffers of its own beside the entry's two
  // (pre, x/state): five. Shared: the state and at most two more at once.
  EXPECT_LE((*exe)->memory().intermediates, 3 * kBuf + 4096) << (*exe)->memory().intermediates;
  std::vector<Tensor> in = {MakeTensor(ET::kF32, {262144}, std::vector<double>(262144, 0.125))}, out;
  ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
  float v = 0.125f;
  for (int trip = 0; trip < 4; ++trip) v = std::exp(-v) + v;
  const std::vector<double> got = Values(out[0]);
  for (size_t i = 0; i < got.size(); i += 4099) ASSERT_FLOAT_EQ(static_cast<float>(got[i]), -v) << i;
}

// A scan: ys[i] = i * x, with element 3 of the state the negated ys
// before the trip's update. With `old_first`, the negation runs before the
// update (feeding it a zero), so both results can be written in place;
// otherwise it runs after the update (reading a zero from it), so the
// update must not overwrite ys.
std::string ScanModule(bool old_first) {
  const char* negation_first = R"(
  old = f32[16384] negate(ys)
  o0 = f32[1] slice(old), slice={[0:1]}
  z1 = f32[1] constant({0})
  d = f32[1] multiply(o0, z1)
  v1 = f32[1] add(r1, d)
  ys2 = f32[16384] dynamic-update-slice(ys, v1, i))";
  const char* update_first = R"(
  ys2 = f32[16384] dynamic-update-slice(ys, r1, i)
  u0 = f32[1] slice(ys2), slice={[0:1]}
  u0s = f32[] reshape(u0)
  zf = f32[] constant(0)
  u0z = f32[] multiply(u0s, zf)
  u0b = f32[16384] broadcast(u0z), dimensions={}
  neg = f32[16384] negate(ys)
  old = f32[16384] add(neg, u0b))";
  return absl::StrCat(R"(HloModule m
cond {
  c = (s32[], f32[], f32[16384], f32[16384]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(16384)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  b = (s32[], f32[], f32[16384], f32[16384]) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  x = f32[] get-tuple-element(b), index=1
  ys = f32[16384] get-tuple-element(b), index=2
  fi = f32[] convert(i)
  v = f32[] multiply(fi, x)
  r1 = f32[1] reshape(v))", old_first ? negation_first : update_first, R"(
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[], f32[16384], f32[16384]) tuple(j, x, ys2, old)
}
ENTRY e {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  z = f32[] constant(0)
  ys = f32[16384] broadcast(z), dimensions={}
  init = (s32[], f32[], f32[16384], f32[16384]) tuple(zero, x, ys, ys)
  loop = (s32[], f32[], f32[16384], f32[16384]) while(init), condition=cond, body=body
  r = f32[16384] get-tuple-element(loop), index=2
  o = f32[16384] get-tuple-element(loop), index=3
  ROOT s = (f32[16384], f32[16384]) tuple(r, o)
})");
}

TEST(ExecutorTest, ScanUpdatesItsAccumulatorInPlaceOnlyWhenNothingReadsItLater) {
  int64_t intermediates[2] = {0, 0};
  for (bool old_first : {false, true}) {
    SCOPED_TRACE(old_first ? "negation first" : "negation after the update");
    auto exe = BuildText(ScanModule(old_first));
    ASSERT_TRUE(exe.ok()) << exe.status();
    intermediates[old_first] = (*exe)->memory().intermediates;
    std::vector<Tensor> in = {MakeTensor(ET::kF32, {}, std::vector<double>{0.5})}, out;
    ASSERT_TRUE((*exe)->Run(in, &out, {}).ok());
    ASSERT_EQ(out.size(), 2u);
    const std::vector<double> ys = Values(out[0]), old = Values(out[1]);
    for (size_t i = 0; i < ys.size(); i += 1021) {
      ASSERT_DOUBLE_EQ(ys[i], 0.5 * static_cast<double>(i)) << i;
      // The last trip negated ys before its update: the last row was 0.
      ASSERT_DOUBLE_EQ(old[i], -0.5 * static_cast<double>(i)) << i;
    }
    ASSERT_DOUBLE_EQ(ys.back(), 0.5 * 16383);
    ASSERT_DOUBLE_EQ(old.back(), 0.0);
  }
  // In place, the update's 64 KiB result needs no buffer of its own.
  EXPECT_LE(intermediates[1] + 65536, intermediates[0]);
}

TEST(ExecutorTest, ModelsPastTheHostsMemoryAreRefusedBeforeTouchingIt) {
  // 4 TiB intermediates (an attention score tensor of a huge batch): the
  // build fails naming the need and what the host has, at once, instead of
  // building kernel tables and faulting pages in until the OOM killer ends
  // the process.
  const char* text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[1048576] parameter(0)
  q = f32[1048576] parameter(1)
  pb = f32[1048576,1048576] broadcast(p), dimensions={0}
  qb = f32[1048576,1048576] broadcast(q), dimensions={1}
  m = f32[1048576,1048576] multiply(pb, qb)
  z = f32[] constant(0)
  ROOT r = f32[1048576] reduce(m, z), dimensions={0}, to_apply=add
})";
  auto exe = BuildText(text);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kResourceExhausted) << exe.status();
  EXPECT_NE(exe.status().message().find("of host memory"), std::string::npos) << exe.status();
  EXPECT_NE(exe.status().message().find("more than 4 TiB"), std::string::npos) << exe.status();
}

// Hands out counting values and keeps what it is given.
class RecordingFeed : public HostFeed {
 public:
  absl::Status Infeed(const std::string&, const hlo::Shape& shape, uint8_t* out, size_t bytes) override {
    shapes.push_back(shape);
    std::vector<float> v(bytes / sizeof(float));
    for (float& x : v) x = static_cast<float>(++counter);
    std::memcpy(out, v.data(), bytes);
    return absl::OkStatus();
  }
  absl::Status Outfeed(const std::string&, const hlo::Shape&, const uint8_t* data, size_t bytes) override {
    const float* f = reinterpret_cast<const float*>(data);
    written.emplace_back(f, f + bytes / sizeof(float));
    return absl::OkStatus();
  }
  int counter = 0;
  std::vector<hlo::Shape> shapes;
  std::vector<std::vector<float>> written;
};

TEST(ExecutorTest, InfeedAndOutfeedGoThroughTheHostFeed) {
  const char* text = R"(HloModule m
ENTRY e {
  t0 = token[] after-all()
  in = (f32[2], token[]) infeed(t0)
  x = f32[2] get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  d = f32[2] add(x, x)
  t2 = token[] outfeed(d, t1), outfeed_shape=f32[2]
  ROOT n = f32[2] negate(x)
})";
  auto exe = BuildText(text);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<Tensor> out;
  // Without a feed the run stops at the infeed, saying what to give.
  absl::Status none = (*exe)->Run({}, &out, {});
  EXPECT_EQ(none.code(), absl::StatusCode::kFailedPrecondition) << none;
  EXPECT_NE(none.message().find("--infeed"), std::string::npos) << none;
  RecordingFeed feed;
  ExecOptions options;
  options.feed = &feed;
  for (int run = 0; run < 2; ++run) ASSERT_TRUE((*exe)->Run({}, &out, options).ok());
  ASSERT_EQ(feed.shapes.size(), 2u);
  EXPECT_EQ(feed.shapes[0].dims, std::vector<int64_t>({2}));
  ASSERT_EQ(feed.written.size(), 2u);
  EXPECT_EQ(feed.written[1], std::vector<float>({6, 8}));  // the second run took 3, 4
  EXPECT_EQ(Values(out[0]), std::vector<double>({-3, -4}));
}

TEST(ExecutorTest, StochasticRoundingDoesNotDependOnThreads) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[200000] parameter(0)
  ROOT c = bf16[200000] convert(a)
})";
  std::vector<double> v(200000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1.0 + (i % 97) * 1e-4;
  ExecOptions one, two;
  one.stochastic_rounding = two.stochastic_rounding = true;
  one.sr_seed = two.sr_seed = 11;
  one.threads = 1;
  two.threads = 2;
  auto a = RunText(text, {MakeTensor(ET::kF32, {200000}, v)}, one);
  auto b = RunText(text, {MakeTensor(ET::kF32, {200000}, v)}, two);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Values((*a)[0]), Values((*b)[0]));
}

}  // namespace
}  // namespace neuron::kernels::testing
