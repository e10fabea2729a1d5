// What NEURON_RT_ENABLE_MEMORY_METRICS and NEURON_RT_MIN_MEM_ERROR_INTERVAL
// change on the simulated device: per-category allocation metrics (their
// system-trace events and system-profile counter tracks), and how often an out-of-memory report is
// printed. Each test runs the same thing with the variable unset, set, and
// set to a boundary value.
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "lib/profile/profiler.h"
#include "lib/profile/sys_trace.h"
#include "lib/runtime/report_throttle.h"
#include "lib/runtime/runtime.h"
#include "tests/device/fast_temp_dir.h"
#include "tests/support/runtime_env.h"

namespace neuron::runtime {
namespace {

using device::MemoryCategory;

// A runtime on a fresh device tree, with the variables of `env` and logs
// kept in a string.
class SeedEffectsMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::FastTempDir();
  }

  std::unique_ptr<Runtime> Init(const std::string& variable, std::optional<std::string> value) {
    std::map<std::string, std::string> env = {
        {"NEURON_SIM_ROOT", root_},
        {"NEURON_RT_LOG_LEVEL", "WARN"},
        {"NEURON_RT_OOM_DUMP_DIRECTORY", root_},
    };
    if (value.has_value()) env[variable] = *value;
    InitOptions o;
    o.env = testing::MapEnv(env);
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(std::move(o));
    EXPECT_TRUE(rt.ok()) << rt.status();
    return rt.ok() ? std::move(*rt) : nullptr;
  }

  size_t Count(const std::string& needle) const {
    size_t n = 0;
    for (size_t at = logs_.find(needle); at != std::string::npos; at = logs_.find(needle, at + 1))
      ++n;
    return n;
  }

  std::string root_;
  testing::LogCapture log_;
  std::string& logs_ = log_.console;
};

TEST_F(SeedEffectsMemory, EnableMemoryMetrics) {
  struct Row {
    std::optional<std::string> value;
    bool metrics;
  };
  const Row rows[] = {
      {std::nullopt, true},  // default: on
      {"1", true},
      {"0", false},  // boundary: off
      {"false", false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.value.value_or("<unset>"));
    logs_.clear();
    profile::SysTrace trace({});
    trace.Open();
    {
      std::unique_ptr<Runtime> rt = Init("NEURON_RT_ENABLE_MEMORY_METRICS", row.value);
      ASSERT_NE(rt, nullptr);
      Core* core = *rt->GetCore(0);
      {
        auto a = rt->AllocateTensor(0, 4096, "a");
        auto b = rt->AllocateTensor(0, 1024, "b");
        ASSERT_TRUE(a.ok() && b.ok());
      }  // both freed
      auto c = rt->AllocateTensor(0, 64, "c");
      ASSERT_TRUE(c.ok());

      const CategoryMetrics tensors =
          core->memory_metrics()[static_cast<int>(MemoryCategory::kTensors)];
      EXPECT_EQ(tensors.allocs, row.metrics ? 3u : 0u);
      EXPECT_EQ(tensors.frees, row.metrics ? 2u : 0u);
      EXPECT_EQ(tensors.in_use, row.metrics ? 64u : 0u);
      EXPECT_EQ(tensors.peak, row.metrics ? 5120u : 0u);
      const std::string line = FormatMemoryMetrics(core->memory_metrics());
      EXPECT_EQ(line.find("tensors 64 B in use") != std::string::npos, row.metrics) << line;
    }
    trace.Close();

    // One "memory_metric" event of the system trace per allocation and free.
    std::vector<profile::SysEvent> metrics;
    for (profile::SysEvent& e : trace.Take(std::nullopt, 0))
      if (e.type == "memory" && e.name == "memory_metric") metrics.push_back(std::move(e));
    ASSERT_EQ(metrics.size(), row.metrics ? 6u : 0u);  // 3 allocs, 3 frees (c at close)
    // In a system profile, they make a counter track per core and category.
    config::RuntimeConfig profile_config;
    profile_config.inspect_system_profile = true;
    profile_config.inspect_output_dir = root_ + "/profile";
    profile::Profiler profiler(profile_config);
    profiler.AddSystemEvents(metrics);
    const std::vector<std::string> written = profiler.Flush();
    ASSERT_EQ(written.size(), row.metrics ? 1u : 0u);
    if (row.metrics) {
      std::ifstream in(written[0]);
      const std::string trace((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      size_t counters = 0;
      for (size_t at = trace.find(R"("ph":"C")"); at != std::string::npos;
           at = trace.find(R"("ph":"C")", at + 1)) {
        ++counters;
      }
      EXPECT_EQ(counters, 6u) << trace;
      EXPECT_NE(trace.find("nc0 tensors in use"), std::string::npos) << trace;
    }
    if (row.metrics) {
      EXPECT_EQ(metrics[0].args["category"], "tensors");
      EXPECT_EQ(metrics[0].args["op"], "alloc");
      EXPECT_EQ(metrics[0].args["in_use"], 4096);
      EXPECT_EQ(metrics[2].args["op"], "free");
      EXPECT_EQ(metrics[2].args["frees"], 1);
    }
  }
}

TEST_F(SeedEffectsMemory, MinMemErrorInterval) {
  struct Row {
    std::optional<std::string> value;
    uint64_t interval_s;
    size_t printed;  // of three OOMs in a row
  };
  const Row rows[] = {
      {std::nullopt, 3600, 1},  // default: once an hour
      {"60", 60, 1},
      {"0", 0, 3},  // boundary: every report
      {"18446744073709551615", UINT64_MAX, 1},  // boundary: the largest
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.value.value_or("<unset>"));
    logs_.clear();
    std::unique_ptr<Runtime> rt = Init("NEURON_RT_MIN_MEM_ERROR_INTERVAL", row.value);
    ASSERT_NE(rt, nullptr);
    EXPECT_EQ(rt->config().min_mem_error_interval_s, row.interval_s);
    for (int i = 0; i < 3; ++i) {
      auto huge = rt->AllocateTensor(0, 64ull << 30, "huge");
      ASSERT_FALSE(huge.ok());  // the caller always gets the error
    }
    EXPECT_EQ(Count("Failed to allocate"), row.printed) << logs_;
    EXPECT_EQ(Count("Device memory report"), row.printed) << logs_;
    EXPECT_EQ((*rt->GetCore(0))->suppressed_oom_reports(), 3 - row.printed);
    EXPECT_EQ(logs_.find("suppressed"), std::string::npos) << logs_;

    // The next report printed says how many were held back; the clock is
    // the caller's, so no test waits for an interval to pass.
    ReportThrottle throttle(row.interval_s);
    const ReportThrottle::Clock::time_point t0{};
    uint64_t suppressed = 99;
    EXPECT_TRUE(throttle.Admit(t0, &suppressed));
    EXPECT_EQ(suppressed, 0u);
    const bool every = row.interval_s == 0;
    EXPECT_EQ(throttle.Admit(t0 + std::chrono::seconds(1), &suppressed), every);
    EXPECT_EQ(throttle.Admit(t0 + std::chrono::seconds(2), &suppressed), every);
    const auto later = row.interval_s == UINT64_MAX
                           ? ReportThrottle::Clock::time_point::max()
                           : t0 + std::chrono::seconds(2 + row.interval_s);
    suppressed = 99;
    EXPECT_EQ(throttle.Admit(later, &suppressed), row.interval_s != UINT64_MAX);
    if (row.interval_s != UINT64_MAX) {
      EXPECT_EQ(suppressed, every ? 0u : 2u);
    }
  }
}

}  // namespace
}  // namespace neuron::runtime
