// The runtime's C++ API: init against the configuration, exclusive cores,
// HBM tensors with lazy scrubbing and OOM reports, loading (hash, legacy,
// target, LNC checks), execution with timeouts, numerical errors and
// stochastic rounding, and the device-tree counters.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/device/device_tree_reader.h"
#include "lib/log/log.h"
#include "lib/runtime/runtime.h"
#include "lib/runtime/status.h"
#include "tests/device/fast_temp_dir.h"
#include "tests/runtime/test_neff.h"

namespace neuron::runtime {
namespace {

using testing::BuildTestNeff;
using testing::TestNeffOptions;

// A runtime environment of its own per test: a fresh device tree, logs to
// a string instead of the console and syslog.
class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FastTempDir();
    env_["NEURON_SIM_ROOT"] = root_;
    env_["NEURON_RT_LOG_LEVEL"] = "WARN";  // console only
    // Failing executions write core dumps (on by default): keep them here.
    env_["NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY"] = root_ + "/core-dump/dt-%d-cid-%c";
    log::SetConsoleSink([this](std::string_view line) { logs_ += line; });
    log::SetSyslogSink([](int, std::string_view) {});
  }
  void TearDown() override {
    log::SetConsoleSink(nullptr);
    log::SetSyslogSink(nullptr);
    log::ConfigureDefaults();
  }

  InitOptions Options() {
    InitOptions o;
    std::map<std::string, std::string> env = env_;
    o.env = [env](std::string_view name) -> std::optional<std::string> {
      auto it = env.find(std::string(name));
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    return o;
  }

  std::unique_ptr<Runtime> Init() {
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(Options());
    EXPECT_TRUE(rt.ok()) << rt.status();
    return rt.ok() ? std::move(*rt) : nullptr;
  }

  std::string Neff(const char* hlo, const TestNeffOptions& options = {}) {
    absl::StatusOr<std::string> bytes = BuildTestNeff(hlo, options);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    return bytes.ok() ? *bytes : "";
  }

  std::string root_;
  std::map<std::string, std::string> env_;
  std::string logs_;
};

// Device tensors for every input/output of a model, inputs filled.
struct Bound {
  std::vector<std::unique_ptr<TensorBuffer>> in, out;
  std::vector<const TensorBuffer*> in_ptrs;
  std::vector<TensorBuffer*> out_ptrs;
};

Bound Bind(Runtime& rt, const Model& model, const std::vector<std::string>& input_bytes) {
  Bound b;
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    auto t = rt.AllocateTensor(model.core_id(), model.inputs()[i].bytes, model.inputs()[i].name);
    EXPECT_TRUE(t.ok()) << t.status();
    if (i < input_bytes.size()) {
      EXPECT_TRUE((*t)->Write(input_bytes[i].data(), 0, input_bytes[i].size()).ok());
    }
    b.in_ptrs.push_back(t->get());
    b.in.push_back(std::move(*t));
  }
  for (const TensorInfo& o : model.outputs()) {
    auto t = rt.AllocateTensor(model.core_id(), o.bytes, o.name);
    EXPECT_TRUE(t.ok()) << t.status();
    b.out_ptrs.push_back(t->get());
    b.out.push_back(std::move(*t));
  }
  return b;
}

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

template <typename T>
std::vector<T> Read(const TensorBuffer& t) {
  std::vector<T> v(t.size() / sizeof(T));
  EXPECT_TRUE(t.Read(v.data(), 0, v.size() * sizeof(T)).ok());
  return v;
}

TEST_F(RuntimeTest, InitFailsOnABadConfigurationWithItsStatus) {
  env_["NEURON_RT_VISIBLE_CORES"] = "7";  // trn1.2xlarge has cores 0-1
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(Options());
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(NrtStatusOf(rt.status()), NRT_SUCCESS);
  EXPECT_NE(rt.status().message().find("NEURON_RT_VISIBLE_CORES"), std::string::npos)
      << rt.status();
}

TEST_F(RuntimeTest, InitRefusesACoreThatIsNotVisible) {
  env_["NEURON_RT_VISIBLE_CORES"] = "1";
  InitOptions o = Options();
  o.cores = std::vector<int>{0};
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(NrtStatusOf(rt.status()), NRT_INVALID);
  EXPECT_NE(rt.status().message().find("not visible"), std::string::npos) << rt.status();
}

TEST_F(RuntimeTest, TakesVisibleCoresOrOnlyTheFirst) {
  {
    std::unique_ptr<Runtime> rt = Init();
    ASSERT_NE(rt, nullptr);
    EXPECT_EQ(rt->cores(), (std::vector<int>{0, 1}));
  }
  InitOptions o = Options();
  o.first_visible_core_only = true;
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ((*rt)->cores(), (std::vector<int>{0}));
}

TEST_F(RuntimeTest, ASecondProcessIsRefusedACoreAndAKilledHolderFreesIt) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InitOptions o = Options();
    o.cores = std::vector<int>{1};
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
    char c = rt.ok() ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  ASSERT_EQ(c, 'y');

  InitOptions o = Options();
  o.cores = std::vector<int>{1};
  absl::StatusOr<std::unique_ptr<Runtime>> refused = Runtime::Init(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(NrtStatusOf(refused.status()), NRT_RESOURCE);
  const std::string message(refused.status().message());
  EXPECT_NE(message.find("NeuronCore(s) not available - Requested:nc1-nc1 Available:1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("pid " + std::to_string(child)), std::string::npos) << message;

  // Core 0 is still free.
  o.cores = std::vector<int>{0};
  EXPECT_TRUE(Runtime::Init(o).ok());

  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  o.cores = std::vector<int>{1};
  absl::StatusOr<std::unique_ptr<Runtime>> after = Runtime::Init(o);
  EXPECT_TRUE(after.ok()) << after.status();
}

TEST_F(RuntimeTest, TensorsReadAndWriteWithinBounds) {
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  auto t = rt->AllocateTensor(0, 16, "t");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->core_id(), 0);
  const char data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE((*t)->Write(data, 8, 8).ok());
  char back[8] = {};
  ASSERT_TRUE((*t)->Read(back, 8, 8).ok());
  EXPECT_EQ(std::memcmp(data, back, 8), 0);
  absl::Status past = (*t)->Write(data, 12, 8);
  EXPECT_EQ(NrtStatusOf(past), NRT_INVALID);
  EXPECT_NE(past.message().find("outside tensor 't'"), std::string::npos) << past;
  EXPECT_EQ(NrtStatusOf(rt->AllocateTensor(5, 16, "x").status()), NRT_INVALID);
}

TEST_F(RuntimeTest, HbmIsScrubbedLazilyWithTheConfiguredPattern) {
  env_["NEURON_RT_HBM_INIT_VAL"] = "fp32_nan";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  Core* core = *rt->GetCore(0);
  EXPECT_EQ(core->scrubbed_bytes(), 0u);  // nothing at init
  auto t = rt->AllocateTensor(0, 4096, "t");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(core->scrubbed_bytes(), 4096u);
  for (uint32_t word : Read<uint32_t>(**t)) ASSERT_EQ(word, 0x7FC00000u);
  // A freed block keeps its (stale) contents; it is not scrubbed again.
  const std::vector<uint32_t> ones(1024, 1);
  ASSERT_TRUE((*t)->Write(ones.data(), 0, 4096).ok());
  t->reset();
  auto again = rt->AllocateTensor(0, 4096, "again");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(core->scrubbed_bytes(), 4096u);
  EXPECT_EQ(Read<uint32_t>(**again), ones);
}

TEST_F(RuntimeTest, HbmPatternsZeroAndOff) {
  env_["NEURON_RT_HBM_INIT_VAL"] = "3735928559";  // 0xDEADBEEF
  {
    std::unique_ptr<Runtime> rt = Init();
    ASSERT_NE(rt, nullptr);
    auto t = rt->AllocateTensor(0, 256, "t");
    ASSERT_TRUE(t.ok());
    for (uint32_t word : Read<uint32_t>(**t)) ASSERT_EQ(word, 0xDEADBEEFu);
  }
  env_["NEURON_RT_HBM_INIT_VAL"] = "bf16_nan";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  auto t = rt->AllocateTensor(0, 256, "t");
  ASSERT_TRUE(t.ok());
  for (uint16_t half : Read<uint16_t>(**t)) ASSERT_EQ(half, 0x7FC0u);
}

TEST_F(RuntimeTest, OutOfMemoryIsReportedByCategory) {
  env_["NEURON_RT_OOM_DUMP_DIRECTORY"] = testing::FastTempDir();
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  auto small = rt->AllocateTensor(0, 1 << 20, "small");
  ASSERT_TRUE(small.ok());
  auto huge = rt->AllocateTensor(0, 64ull << 30, "huge");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(NrtStatusOf(huge.status()), NRT_RESOURCE);
  EXPECT_NE(huge.status().message().find("tensor 'huge'"), std::string::npos) << huge.status();
  EXPECT_NE(logs_.find("Failed to allocate 64 GiB (tensors)"), std::string::npos) << logs_;
  EXPECT_NE(logs_.find("tensors"), std::string::npos);
  EXPECT_NE(logs_.find("1 MiB in use"), std::string::npos) << logs_;
  EXPECT_EQ(logs_.find("model_shared_scratchpad"), std::string::npos);  // aggregates only
  EXPECT_NE(logs_.find("Wrote nrt memory alloc debug info to"), std::string::npos);
}

TEST_F(RuntimeTest, VerboseDeviceMemoryOomLogListsEveryCategory) {
  env_["NEURON_RT_DBG_VERBOSE_DEV_MEM"] = "1";
  env_["NEURON_RT_OOM_DUMP_DIRECTORY"] = testing::FastTempDir();
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  EXPECT_FALSE(rt->AllocateTensor(0, 64ull << 30, "huge").ok());
  for (const char* category : {"collectives", "constants", "model_code",
                               "model_shared_scratchpad", "nonshared_scratchpad", "tensors"}) {
    EXPECT_NE(logs_.find(category), std::string::npos) << category << "\n" << logs_;
  }
}

TEST_F(RuntimeTest, OomLogCanBeTurnedOff) {
  env_["NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG"] = "0";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  EXPECT_FALSE(rt->AllocateTensor(0, 64ull << 30, "huge").ok());
  EXPECT_NE(logs_.find("Failed to allocate"), std::string::npos);
  EXPECT_EQ(logs_.find("Device memory report"), std::string::npos) << logs_;
}

TEST_F(RuntimeTest, LoadsExecutesAndCountsInTheDeviceTree) {
  const std::string neff = Neff(testing::kAddHlo);
  {
    std::unique_ptr<Runtime> rt = Init();
    ASSERT_NE(rt, nullptr);
    absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadBytes(neff, 0);
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_EQ((*model)->inputs().size(), 2u);
    EXPECT_EQ((*model)->inputs()[0].name, "x");
    EXPECT_EQ((*model)->inputs()[1].name, "y");
    ASSERT_EQ((*model)->outputs().size(), 1u);
    EXPECT_EQ((*model)->outputs()[0].name, "sum");
    EXPECT_EQ((*model)->outputs()[0].bytes, 24u);
    EXPECT_GT((*model)->cost().model_code, 0u);
    const std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {10, 20, 30, 40, 50, 60};
    Bound b = Bind(*rt, **model, {Bytes(x), Bytes(y)});
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<ExecuteResult> r = (*model)->Execute(b.in_ptrs, b.out_ptrs);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->status, NRT_SUCCESS);
    }
    EXPECT_EQ(Read<float>(*b.out[0]), (std::vector<float>{11, 22, 33, 44, 55, 66}));
    // A missing input is refused (and counted).
    EXPECT_EQ(NrtStatusOf((*model)->Execute({b.in_ptrs[0]}, b.out_ptrs).status()), NRT_INVALID);
  }
  absl::StatusOr<device::CoreCounters> counters = device::ReadCoreCounters(root_, 0, 0);
  ASSERT_TRUE(counters.ok()) << counters.status();
  EXPECT_EQ(counters->other_info["model_load_count"], 1u);
  EXPECT_EQ(counters->other_info["inference_count"], 4u);
  EXPECT_EQ(counters->status["success"].total, 3u);
  EXPECT_EQ(counters->status["exec_bad_input"].total, 1u);
}

TEST_F(RuntimeTest, LoadFileReadsAFastLoadingNeff) {
  TestNeffOptions options;
  options.fast_loading = true;
  const std::string path =
      testing::WriteTestFile(testing::FastTempDir(), "add.neff", Neff(testing::kAddHlo, options));
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadFile(path, 1);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->core_id(), 1);
  EXPECT_GE((*model)->timings().total_ms, (*model)->timings().build_ms);
}

// A step that returns its state as it got it (a predict step returning its
// weights, donated) leaves that tensor's version alone when the output is
// the input's own tensor, so kernels keep what they derived from it (a
// convolution's reordered weights); the output it computes, and an input
// it overwrites in place, get new versions.
TEST_F(RuntimeTest, AStateReturnedUnchangedInItsOwnTensorKeepsItsVersion) {
  const char kStep[] = R"(HloModule step, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
ENTRY main {
  w = f32[4] parameter(0)
  c = f32[4] parameter(1)
  x = f32[4] parameter(2)
  wx = f32[4] multiply(w, x)
  c1 = f32[4] add(c, x)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(w, c1, wx)
}
)";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadBytes(Neff(kStep), 0);
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<float> w = {1, 2, 3, 4}, c = {0, 0, 0, 0}, x = {2, 2, 2, 2};
  Bound b = Bind(*rt, **model, {Bytes(w), Bytes(c), Bytes(x)});
  // The state outputs are the inputs' own tensors (donated).
  TensorBuffer* w_tensor = b.in[0].get();
  TensorBuffer* c_tensor = b.in[1].get();
  std::vector<TensorBuffer*> out = {w_tensor, c_tensor, b.out_ptrs[2]};
  const uint64_t w_before = w_tensor->version(), c_before = c_tensor->version();
  const uint64_t y_before = b.out_ptrs[2]->version();
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<ExecuteResult> r = (*model)->Execute(b.in_ptrs, out);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  EXPECT_EQ(Read<float>(*w_tensor), w);
  EXPECT_EQ(Read<float>(*c_tensor), (std::vector<float>{4, 4, 4, 4}));
  EXPECT_EQ(Read<float>(*b.out_ptrs[2]), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(w_tensor->version(), w_before);
  EXPECT_NE(c_tensor->version(), c_before);
  EXPECT_NE(b.out_ptrs[2]->version(), y_before);
  // Given another tensor as its output, the state is copied there: that
  // one is written.
  std::unique_ptr<TensorBuffer> copy = std::move(*rt->AllocateTensor(0, 16, "w_out"));
  const uint64_t copy_before = copy->version();
  out[0] = copy.get();
  ASSERT_TRUE((*model)->Execute(b.in_ptrs, out).ok());
  EXPECT_EQ(Read<float>(*copy), w);
  EXPECT_NE(copy->version(), copy_before);
}

TEST_F(RuntimeTest, AVariableLargerThanAScratchpadPageLogsTheRecommendedSize) {
  env_["NEURON_RT_CONTIGUOUS_SCRATCHPAD"] = "0";
  env_["NEURON_SCRATCHPAD_PAGE_SIZE"] = "1";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  // An intermediate of 3 MiB: it needs 4 MiB pages.
  const char* kBig = R"(HloModule big
ENTRY main {
  x = f32[768,1024] parameter(0)
  e = f32[768,1024] exponential(x)
  ROOT n = f32[768,1024] negate(e)
}
)";
  absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadBytes(Neff(kBig), 0);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->cost().scratchpad_page, 1u << 20);
  EXPECT_EQ((*model)->cost().scratchpad % (1u << 20), 0u);
  EXPECT_NE(logs_.find("recommended: NEURON_SCRATCHPAD_PAGE_SIZE=4 with the compiler flag"),
            std::string::npos)
      << logs_;
}

TEST_F(RuntimeTest, AnEndlessLoopTimesOutAndTheRuntimeStaysUsable) {
  env_["NEURON_RT_EXEC_TIMEOUT"] = "1";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  absl::StatusOr<std::unique_ptr<Model>> endless = rt->LoadBytes(Neff(testing::kEndlessHlo), 0);
  ASSERT_TRUE(endless.ok()) << endless.status();
  Bound b = Bind(*rt, **endless, {Bytes(std::vector<int32_t>{0})});
  absl::StatusOr<ExecuteResult> r = (*endless)->Execute(b.in_ptrs, b.out_ptrs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(NrtStatusOf(r.status()), NRT_TIMEOUT);
  EXPECT_NE(r.status().message().find("NEURON_RT_EXEC_TIMEOUT=1"), std::string::npos);

  absl::StatusOr<std::unique_ptr<Model>> add = rt->LoadBytes(Neff(testing::kAddHlo), 0);
  ASSERT_TRUE(add.ok()) << add.status();
  const std::vector<float> ones(6, 1);
  Bound a = Bind(*rt, **add, {Bytes(ones), Bytes(ones)});
  absl::StatusOr<ExecuteResult> ok = (*add)->Execute(a.in_ptrs, a.out_ptrs);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(Read<float>(*a.out[0]), std::vector<float>(6, 2));
}

class NumericalErrorTest : public RuntimeTest {
 protected:
  absl::StatusOr<ExecuteResult> RunLog() {
    rt_ = Init();
    if (rt_ == nullptr) return absl::InternalError("init");
    absl::StatusOr<std::unique_ptr<Model>> model = rt_->LoadBytes(Neff(testing::kLogHlo), 0);
    if (!model.ok()) return model.status();
    model_ = std::move(*model);
    b_ = Bind(*rt_, *model_, {Bytes(std::vector<float>{-1, 0, 1, 2})});
    return model_->Execute(b_.in_ptrs, b_.out_ptrs);
  }
  std::unique_ptr<Runtime> rt_;
  std::unique_ptr<Model> model_;
  Bound b_;
};

TEST_F(NumericalErrorTest, SilentAtVerbosityNone) {
  absl::StatusOr<ExecuteResult> r = RunLog();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, NRT_SUCCESS);
  EXPECT_TRUE(r->numerical_report.empty());
  EXPECT_EQ(logs_.find("Numerical error"), std::string::npos);
  EXPECT_TRUE(std::isnan(Read<float>(*b_.out[0])[0]));
}

TEST_F(NumericalErrorTest, CriticalNamesTheOutput) {
  env_["NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"] = "critical";
  absl::StatusOr<ExecuteResult> r = RunLog();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, NRT_EXEC_COMPLETED_WITH_NUM_ERR);
  EXPECT_FALSE(r->fail);
  EXPECT_NE(r->numerical_report.find("output 'r' (#0)"), std::string::npos) << r->numerical_report;
  EXPECT_EQ(r->numerical_report.find("first produced"), std::string::npos);
  EXPECT_NE(logs_.find("Numerical error"), std::string::npos);
}

TEST_F(NumericalErrorTest, DebugNamesTheFirstProducingInstruction) {
  env_["NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"] = "debug";
  absl::StatusOr<ExecuteResult> r = RunLog();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, NRT_EXEC_COMPLETED_WITH_NUM_ERR);
  EXPECT_NE(r->numerical_report.find("first produced by HLO instruction 'l'"), std::string::npos)
      << r->numerical_report;
}

TEST_F(NumericalErrorTest, VerboseCountsNanAndInf) {
  env_["NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"] = "verbose";
  absl::StatusOr<ExecuteResult> r = RunLog();
  ASSERT_TRUE(r.ok()) << r.status();
  // log(-1)*-1 = NaN, log(0)*0 = -inf*0 = NaN.
  EXPECT_NE(r->numerical_report.find("[2 NaN, 0 Inf, first at element 0]"), std::string::npos)
      << r->numerical_report;
}

TEST_F(NumericalErrorTest, FailOnNanMakesItAFailure) {
  env_["NEURON_FAIL_ON_NAN"] = "1";
  absl::StatusOr<ExecuteResult> r = RunLog();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, NRT_EXEC_COMPLETED_WITH_NUM_ERR);
  EXPECT_TRUE(r->fail);
}

TEST_F(RuntimeTest, HashValidationCatchesAFlippedPayloadByte) {
  std::string neff = Neff(testing::kAddHlo);
  neff[neff.size() / 2 + 512] ^= 0x01;
  env_["NEURON_RT_VALIDATE_HASH"] = "1";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadBytes(neff, 0);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(NrtStatusOf(model.status()), NRT_INVALID);
  EXPECT_NE(model.status().message().find("hash mismatch"), std::string::npos) << model.status();
}

TEST_F(RuntimeTest, CorruptAndTruncatedNeffsAreRefusedWithoutHashValidation) {
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  const std::string neff = Neff(testing::kAddHlo);
  absl::StatusOr<std::unique_ptr<Model>> truncated = rt->LoadBytes(neff.substr(0, neff.size() - 100), 0);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(NrtStatusOf(truncated.status()), NRT_INVALID);
  std::string corrupt = neff;
  for (size_t i = 1100; i < corrupt.size(); i += 7) corrupt[i] ^= 0x5A;
  absl::StatusOr<std::unique_ptr<Model>> bad = rt->LoadBytes(corrupt, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(NrtStatusOf(bad.status()), NRT_INVALID) << bad.status();
  EXPECT_FALSE(rt->LoadBytes("not a neff", 0).ok());
}

TEST_F(RuntimeTest, LegacyNeffsLoadOnlyWhenAllowed) {
  TestNeffOptions legacy;
  legacy.version_major = 1;
  const std::string neff = Neff(testing::kAddHlo, legacy);
  {
    std::unique_ptr<Runtime> rt = Init();
    ASSERT_NE(rt, nullptr);
    absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadBytes(neff, 0);
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(NrtStatusOf(model.status()), NRT_UNSUPPORTED_NEFF_VERSION);
    EXPECT_NE(model.status().message().find("NEURON_RT_ALLOW_LEGACY_NEFF"), std::string::npos)
        << model.status();
  }
  env_["NEURON_RT_ALLOW_LEGACY_NEFF"] = "1";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadBytes(neff, 0);
  EXPECT_TRUE(model.ok()) << model.status();
}

TEST_F(RuntimeTest, AnotherTargetOrLncIsRefused) {
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  TestNeffOptions trn2;
  trn2.target = "trn2";
  absl::StatusOr<std::unique_ptr<Model>> target = rt->LoadBytes(Neff(testing::kAddHlo, trn2), 0);
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(NrtStatusOf(target.status()), NRT_UNSUPPORTED_NEFF_VERSION);
  EXPECT_NE(target.status().message().find("compiled for trn2 but this instance is trn1.2xlarge"),
            std::string::npos)
      << target.status();
  EXPECT_NE(target.status().message().find("NEURON_SIM_INSTANCE_TYPE=trn2"), std::string::npos)
      << target.status();
  // A trn2 NEFF with trn2's LNC 2 is still refused for its target first.
  trn2.lnc = 2;
  absl::StatusOr<std::unique_ptr<Model>> both = rt->LoadBytes(Neff(testing::kAddHlo, trn2), 0);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("compiled for trn2"), std::string::npos) << both.status();
  TestNeffOptions lnc2;
  lnc2.lnc = 2;
  absl::StatusOr<std::unique_ptr<Model>> lnc = rt->LoadBytes(Neff(testing::kAddHlo, lnc2), 0);
  ASSERT_FALSE(lnc.ok());
  EXPECT_EQ(NrtStatusOf(lnc.status()), NRT_INVALID);
  EXPECT_NE(lnc.status().message().find("LNC"), std::string::npos) << lnc.status();
}

class RoundingTest : public RuntimeTest {
 protected:
  std::vector<uint16_t> Convert() {
    std::unique_ptr<Runtime> rt = Init();
    if (rt == nullptr) return {};
    absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadBytes(Neff(testing::kConvertHlo), 0);
    EXPECT_TRUE(model.ok()) << model.status();
    if (!model.ok()) return {};
    std::vector<float> x(4096);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i) * 1e-4f;
    Bound b = Bind(*rt, **model, {Bytes(x)});
    EXPECT_TRUE((*model)->Execute(b.in_ptrs, b.out_ptrs).ok());
    return Read<uint16_t>(*b.out[0]);
  }
};

TEST_F(RoundingTest, StochasticRoundingIsReproducibleWithTheSeed) {
  const std::vector<uint16_t> nearest = Convert();
  env_["NEURON_RT_STOCHASTIC_ROUNDING_EN"] = "1";
  env_["NEURON_RT_STOCHASTIC_ROUNDING_SEED"] = "7";
  const std::vector<uint16_t> a = Convert();
  const std::vector<uint16_t> b = Convert();
  env_["NEURON_RT_STOCHASTIC_ROUNDING_SEED"] = "8";
  const std::vector<uint16_t> c = Convert();
  ASSERT_EQ(a.size(), 4096u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, nearest);
}

TEST_F(RuntimeTest, QueuedRequestsAreBounded) {
  env_["NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS"] = "2";
  std::unique_ptr<Runtime> rt = Init();
  ASSERT_NE(rt, nullptr);
  Core* core = *rt->GetCore(0);
  ASSERT_TRUE(core->Admit(true).ok());
  ASSERT_TRUE(core->Admit(true).ok());
  absl::Status full = core->Admit(true);
  EXPECT_EQ(NrtStatusOf(full), NRT_QUEUE_FULL);
  EXPECT_NE(full.message().find("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS=2"), std::string::npos);
  core->Release();
  EXPECT_TRUE(core->Admit(true).ok());
  core->Release();
  core->Release();
  EXPECT_EQ(core->max_in_flight_seen(), 2);
}

}  // namespace
}  // namespace neuron::runtime

namespace neuron::runtime {
namespace {

// Weights larger than 1 KiB live in the NEFF's constants/ members and are
// used in place (fast-loading) or from the decompressed payload (however many
// zstd frames it has): either way
// the executed values must be the weights' own.
TEST_F(RuntimeTest, MemberHeldWeightsReachTheExecutionInEveryLayout) {
  constexpr int kN = 1024;
  std::string values;
  std::vector<float> expected;
  for (int i = 0; i < kN; ++i) {
    values += (i ? "," : "") + std::to_string(i * 3 - 500);
    expected.push_back(static_cast<float>(i * 3 - 500) + 0.5f);
  }
  const std::string hlo = "HloModule weights\nENTRY main {\n  x = f32[1024] parameter(0)\n"
                          "  w = f32[1024] constant({" + values + "})\n"
                          "  ROOT y = f32[1024] add(x, w)\n}\n";
  // Compressed as many small frames (decompressed in parallel), as one frame
  // (older NEFFs), and fast-loading.
  struct Layout {
    const char* label;
    bool fast;
    uint64_t frame_bytes;
  };
  for (const Layout& layout : {Layout{"compressed, 1 KiB frames", false, 1024},
                               Layout{"compressed, one frame", false, 0}, Layout{"fast-loading", true, 0}}) {
    SCOPED_TRACE(layout.label);
    testing::TestNeffOptions options;
    options.fast_loading = layout.fast;
    options.zstd_frame_bytes = layout.frame_bytes;
    absl::StatusOr<std::string> neff = testing::BuildTestNeff(hlo, options);
    ASSERT_TRUE(neff.ok()) << neff.status();
    std::unique_ptr<Runtime> rt = Init();
    ASSERT_NE(rt, nullptr);
    absl::StatusOr<std::unique_ptr<Model>> model = rt->LoadBytes(*neff, 0);
    ASSERT_TRUE(model.ok()) << model.status();
    Bound b = Bind(*rt, **model, {Bytes(std::vector<float>(kN, 0.5f))});
    absl::StatusOr<ExecuteResult> r = (*model)->Execute(b.in_ptrs, b.out_ptrs);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Read<float>(*b.out[0]), expected);
  }
}

}  // namespace
}  // namespace neuron::runtime
