// Runtime variables with a visible effect on debugging output, each run
// unset, set to a valid value and at a boundary:
// NEURON_RT_DISABLE_DEBUG_INFO (the debug-information map behind the
// numerical-error report's instruction name) and
// NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES (the per-core stdout queue of
// the neuron.device_print custom call).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "lib/runtime/runtime.h"
#include "tests/device/fast_temp_dir.h"
#include "tests/support/runtime_env.h"
#include "tests/runtime/test_neff.h"

namespace neuron::runtime {
namespace {

// One runtime over its own device tree, with `env` on top of quiet logs.
class SeedEffectsDebugTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FastTempDir();
  }

  std::unique_ptr<Runtime> Init(std::map<std::string, std::string> env) {
    env["NEURON_SIM_ROOT"] = root_;
    env["NEURON_RT_LOG_LEVEL"] = "WARN";
    InitOptions o;
    o.env = testing::MapEnv(env);
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(o);
    EXPECT_TRUE(rt.ok()) << rt.status();
    return rt.ok() ? std::move(*rt) : nullptr;
  }

  // Loads `hlo` on core 0 and runs it once on `input` (one f32 input);
  // returns the execution result.
  absl::StatusOr<ExecuteResult> LoadAndRun(Runtime& rt, const char* hlo,
                                           const std::vector<float>& input,
                                           std::unique_ptr<Model>* model) {
    absl::StatusOr<std::string> neff = testing::BuildTestNeff(hlo);
    if (!neff.ok()) return neff.status();
    absl::StatusOr<std::unique_ptr<Model>> m = rt.LoadBytes(*neff, 0);
    if (!m.ok()) return m.status();
    *model = std::move(*m);
    auto in = rt.AllocateTensor(0, (*model)->inputs()[0].bytes, "in");
    if (!in.ok()) return in.status();
    if (absl::Status s = (*in)->Write(input.data(), 0, input.size() * sizeof(float)); !s.ok())
      return s;
    auto out = rt.AllocateTensor(0, (*model)->outputs()[0].bytes, "out");
    if (!out.ok()) return out.status();
    return (*model)->Execute({in->get()}, {out->get()});
  }

  std::string root_;
  testing::LogCapture log_;
  std::string& logs_ = log_.console;
};

TEST_F(SeedEffectsDebugTest, DisableDebugInfoDropsTheInstructionName) {
  struct Case {
    std::optional<std::string> value;
    bool built;
  };
  const Case cases[] = {
      {std::nullopt, true},  // default: built
      {"0", true},           // explicitly on
      {"1", false},          // skipped
      {"true", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value.value_or("(unset)"));
    std::map<std::string, std::string> env = {{"NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "debug"}};
    if (c.value) env["NEURON_RT_DISABLE_DEBUG_INFO"] = *c.value;
    std::unique_ptr<Runtime> rt = Init(env);
    ASSERT_NE(rt, nullptr);
    std::unique_ptr<Model> model;
    absl::StatusOr<ExecuteResult> r = LoadAndRun(*rt, testing::kLogHlo, {-1, 0, 1, 2}, &model);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, NRT_EXEC_COMPLETED_WITH_NUM_ERR);
    const std::optional<size_t> entries = model->debug_info_entries();
    if (c.built) {
      ASSERT_TRUE(entries.has_value());
      EXPECT_EQ(*entries, 3u);  // x, l, r
      EXPECT_EQ(model->timings().debug_info_ms >= 0, true);
      EXPECT_NE(r->numerical_report.find(
                    "first produced by HLO instruction 'l' (log in computation 'main')"),
                std::string::npos)
          << r->numerical_report;
      EXPECT_EQ(r->numerical_report.find("NEURON_RT_DISABLE_DEBUG_INFO"), std::string::npos);
    } else {
      EXPECT_FALSE(entries.has_value());
      EXPECT_EQ(model->timings().debug_info_ms, 0);
      EXPECT_EQ(r->numerical_report.find("'l'"), std::string::npos) << r->numerical_report;
      EXPECT_NE(r->numerical_report.find("first produced by an unknown HLO instruction (the "
                                         "debug-information map is off: "
                                         "NEURON_RT_DISABLE_DEBUG_INFO=1)"),
                std::string::npos)
          << r->numerical_report;
    }
    // The log carries the same report.
    EXPECT_NE(logs_.find(c.built ? "'l' (log" : "map is off"), std::string::npos) << logs_;
    logs_.clear();
  }
}

// Prints its input through neuron.device_print, then doubles it.
constexpr const char* kPrintHlo = R"(HloModule printed
ENTRY main {
  x = f32[2,2] parameter(0)
  p = f32[2,2] custom-call(x), custom_call_target="neuron.device_print", backend_config={"prefix":"x is "}
  ROOT y = f32[2,2] add(p, p)
}
)";

TEST_F(SeedEffectsDebugTest, GpsimdStdoutQueueSizeBoundsDevicePrintText) {
  const std::string line = "x is 2x2xf32=[1 2][3 4]\n";  // 24 bytes
  struct Case {
    std::optional<std::string> value;
    std::string stdout_text;
  };
  const Case cases[] = {
      {std::nullopt, ""},  // default 0: no stdout at all
      {"0", ""},
      {"1k", line},        // fits
      {"24", line},        // exactly fits
      {"8", "x is 2x2\n[nc0 stdout queue full: 16 bytes dropped "
            "(NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=8)]\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value.value_or("(unset)"));
    std::map<std::string, std::string> env;
    if (c.value) env["NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES"] = *c.value;
    std::unique_ptr<Runtime> rt = Init(env);
    ASSERT_NE(rt, nullptr);
    std::unique_ptr<Model> model;
    ::testing::internal::CaptureStdout();
    absl::StatusOr<ExecuteResult> r = LoadAndRun(*rt, kPrintHlo, {1, 2, 3, 4}, &model);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, NRT_SUCCESS);
    EXPECT_EQ(printed, c.stdout_text);
  }
}

}  // namespace
}  // namespace neuron::runtime
