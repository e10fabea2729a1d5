// Walks every row of AllVariables(): its default with an empty environment,
// a valid value, and an invalid value. The expectations below are written
// from the reference (seeds/neuron-runtime-env-vars.txt), on a trn2.48xlarge
// (16 devices x 8 cores, LNC 2 = 64 logical cores) where every default is a
// plain default.
#include <functional>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "lib/config/config.h"
#include "tests/config/config_test_util.h"

namespace neuron::config {
namespace {

using testing::FindValue;
using testing::ResolveWith;
using testing::Trn2Large;

struct Case {
  std::string default_value;  // effective value with an empty environment
  std::string valid;          // a value the reference accepts
  std::string valid_shown;    // its effective value
  std::string invalid;        // "" = the type has no invalid value
  // The reference says this invalid value logs an error and keeps the
  // default (init goes on) instead of failing init.
  bool invalid_kept_default = false;
  // Other variables the valid value needs to take effect.
  std::map<std::string, std::string> companions;
  // Checks the typed field took the valid value (null: no typed field).
  std::function<bool(const RuntimeConfig&)> field_has_valid;
};

Case Bool(const char* dflt, const char* valid, const char* shown, const char* invalid,
          std::function<bool(const RuntimeConfig&)> check) {
  return Case{dflt, valid, shown, invalid, false, {}, std::move(check)};
}

Case Num(const char* dflt, const char* valid, const char* shown, const char* invalid,
         std::function<bool(const RuntimeConfig&)> check) {
  return Case{dflt, valid, shown, invalid, false, {}, std::move(check)};
}

std::map<std::string, Case> Cases() {
  using C = const RuntimeConfig&;
  std::map<std::string, Case> k;
  // Functional.
  k["NEURON_RT_VISIBLE_CORES"] = Num("0-63", "0-3", "0-3", "0-x", [](C c) {
    return c.visible_cores == std::vector<int>{0, 1, 2, 3};
  });
  k["NEURON_LOGICAL_NC_CONFIG"] =
      Num("2", "1", "1", "two", [](C c) { return c.logical_nc_config == 1; });
  k["NEURON_RT_ROOT_COMM_ID"] =
      Num("", "10.1.4.145:45654", "10.1.4.145:45654", "10.1.4.145",
          [](C c) { return c.root_comm_id == "10.1.4.145:45654"; });
  k["NEURON_RT_EXEC_TIMEOUT"] =
      Num("30", "600", "600", "abc", [](C c) { return c.exec_timeout_s == 600; });
  k["NEURON_RT_ALLOW_LEGACY_NEFF"] =
      Num("0", "1", "1", "-1", [](C c) { return c.allow_legacy_neff == 1; });
  k["NEURON_RT_VALIDATE_HASH"] =
      Bool("false", "TRUE", "true", "yes", [](C c) { return c.validate_hash; });
  k["NEURON_RT_ENABLE_RG_VALIDATION"] =
      Bool("false", "1", "true", "2", [](C c) { return c.enable_rg_validation; });
  k["NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT"] = Num(
      "0", "45000", "45000", "70000",
      [](C c) { return c.async_sendrecv_bootstrap_port == 45000; });
  k["NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED"] = Bool(
      "false", "True", "true", "on", [](C c) { return c.async_sendrecv_experimental; });
  k["NEURON_RT_ENABLE_P2P"] =
      Bool("false", "1", "true", "maybe", [](C c) { return c.enable_p2p; });
  k["NEURON_FAIL_ON_NAN"] =
      Bool("false", "1", "true", "nan", [](C c) { return c.fail_on_nan; });
  k["NEURON_RT_STOCHASTIC_ROUNDING_EN"] =
      Bool("false", "true", "true", "x", [](C c) { return c.stochastic_rounding_en; });
  k["NEURON_RT_STOCHASTIC_ROUNDING_SEED"] = Num(
      "0", "12345", "12345", "-5", [](C c) { return c.stochastic_rounding_seed == 12345; });
  // Performance tuning.
  k["NEURON_RT_DBG_DMA_PACKETIZATION_SIZE"] =
      Num("4096", "64KiB", "65536", "4 parsecs",
          [](C c) { return c.dma_packetization_size == 65536; });
  k["NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS"] = Num(
      "8", "16", "16", "eight", [](C c) { return c.xu_max_queued_requests == 16; });
  k["NEURON_RT_DISABLE_DEBUG_INFO"] =
      Bool("false", "1", "true", "2", [](C c) { return c.disable_debug_info; });
  k["NEURON_RT_CC_CHANNEL_BUFFER_N"] =
      Num("8", "16", "16", "x", [](C c) { return c.cc_channel_buffer_n == 16; });
  k["NEURON_RT_CC_CHUNK_SIZE"] = Num("2097152", "4MiB", "4194304", "4 MiBs",
                                     [](C c) { return c.cc_chunk_size == (4u << 20); });
  k["NEURON_RT_CC_STREAM_SPLIT"] = Case{"3:1", "2:2", "2:2", "3:0", true, {}, [](C c) {
                                          return c.cc_stream_split_w0 == 2 &&
                                                 c.cc_stream_split_w1 == 2;
                                        }};
  k["NEURON_RT_DBG_CC_DMA_PACKET_SIZE"] =
      Num("", "4096,65536", "4096,65536", "4096,,1", nullptr);
  k["NEURON_RT_DISABLE_EXECUTION_BARRIER"] =
      Bool("false", "1", "true", "x", [](C c) { return c.disable_execution_barrier; });
  k["NEURON_RT_ENABLE_HW_EXECUTION_BARRIER"] = Bool(
      "true", "0", "false", "x", [](C c) { return !c.enable_hw_execution_barrier; });
  k["NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY"] =
      Num("", "40-47,88-95", "40-47,88-95", "40-", [](C c) {
        return c.low_latency_tasks_cpu_affinity.size() == 16 &&
               c.low_latency_tasks_cpu_affinity.front() == 40 &&
               c.low_latency_tasks_cpu_affinity.back() == 95;
      });
  k["NEURON_RT_ONE_THREAD_PER_CORE"] =
      Bool("false", "1", "true", "x", [](C c) { return c.one_thread_per_core; });
  k["NEURON_RT_RANKS_PER_NETWORK_PROXY"] =
      Num("1", "4", "4", "x", [](C c) { return c.ranks_per_network_proxy == 4; });
  k["NEURON_RT_REGISTER_HBM_MR"] =
      Bool("true", "0", "false", "x", [](C c) { return !c.register_hbm_mr; });
  k["NEURON_RT_CONTIGUOUS_SCRATCHPAD"] =
      Bool("true", "0", "false", "x", [](C c) { return !c.contiguous_scratchpad; });
  k["NEURON_RT_MAP_HBM"] = Bool("true", "false", "false", "x", [](C c) { return !c.map_hbm; });
  k["NEURON_SCRATCHPAD_PAGE_SIZE"] = Num(
      "512", "256", "256", "big", [](C c) { return c.scratchpad_page_size_mib == 256; });
  // Observability.
  k["NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES"] = Num(
      "0", "1m", "1048576", "-1", [](C c) { return c.gpsimd_stdout_queue_size == (1u << 20); });
  k["NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"] =
      Num("none", "Debug", "debug", "loud", [](C c) {
        return c.numerical_errors_verbosity == NumericalVerbosity::kDebug;
      });
  k["NEURON_RT_DBG_VERBOSE_DEV_MEM"] =
      Bool("false", "1", "true", "x", [](C c) { return c.dbg_verbose_dev_mem; });
  k["NEURON_RT_DEBUG_MEMLOG_MAX_SIZE"] = Num(
      "1048576", "4MB", "4194304", "lots", [](C c) { return c.debug_memlog_max_size == (4u << 20); });
  k["NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG"] = Bool(
      "true", "false", "false", "x", [](C c) { return !c.enable_device_memory_oom_log; });
  k["NEURON_RT_ENABLE_MEMORY_METRICS"] =
      Bool("true", "0", "false", "x", [](C c) { return !c.enable_memory_metrics; });
  k["NEURON_RT_LOG_LEVEL"] = Num("WARN", "info", "INFO", "LOUD", [](C c) {
    return c.log[7].level == LogLevel::kInfo;  // NRT
  });
  k["NEURON_RT_LOG_LOCATION"] = Num("console,syslog", "SYSLOG", "syslog", "file",
                                    [](C c) { return !c.log[7].console && c.log[7].syslog; });
  for (int i = 0; i < kNumLogSubmodules; ++i) {
    const std::string sub = kLogSubmodules[i];
    k["NEURON_RT_LOG_LEVEL_" + sub] =
        Num(sub == "HAL" ? "ERROR" : "WARN", "debug", "DEBUG", "chatty",
            [i](C c) { return c.log[i].level == LogLevel::kDebug; });
    k["NEURON_RT_LOG_LOCATION_" + sub] =
        Num("console,syslog", "console", "console", "stdout",
            [i](C c) { return c.log[i].console && !c.log[i].syslog; });
  }
  k["NEURON_RT_MIN_MEM_ERROR_INTERVAL"] =
      Num("3600", "60", "60", "1h", [](C c) { return c.min_mem_error_interval_s == 60; });
  k["NEURON_RT_OOM_DUMP_DIRECTORY"] =
      Case{"/tmp", "/var/oom", "/var/oom", "/" + std::string(250, 'a'), true, {},
           [](C c) { return c.oom_dump_directory == "/var/oom"; }};
  k["NEURON_RT_DEBUG_STREAM_BUFFER_SIZE"] = Num(
      "262144", "1024", "1024", "1000", [](C c) { return c.debug_stream_buffer_size == 1024; });
  // Profiling.
  k["NEURON_RT_INSPECT_ENABLE"] =
      Bool("false", "1", "true", "x", [](C c) { return c.inspect_enable; });
  k["NEURON_RT_INSPECT_CPU_UTIL"] =
      Bool("false", "1", "true", "x", [](C c) { return c.inspect_cpu_util; });
  k["NEURON_RT_INSPECT_DEVICE_PROFILE"] = Num("disabled", "1", "model", "always", [](C c) {
    return c.inspect_device_profile == DeviceProfileMode::kModel;
  });
  k["NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP"] =
      Case{"0", "3", "3", "three", false, {{"NEURON_RT_INSPECT_DEVICE_PROFILE", "model"}},
           [](C c) { return c.inspect_num_warmup == 3; }};
  k["NEURON_RT_INSPECT_EVENT_FILTER_NC"] = Num("0-63", "0-1", "0-1", "a-b", [](C c) {
    return c.inspect_event_filter_nc == std::vector<int>{0, 1};
  });
  k["NEURON_RT_INSPECT_EVENT_FILTER_TYPE"] =
      Num("nc_exec,compute,dma,h2d_dma,dge,cc_running,cc_pending,throttle,"
          "api,load,unload,exec,kernel,memory,tensor,cc_setup",
          "api,dma", "dma,api", "gpu", [](C c) {
            return c.inspect_event_types == std::vector<std::string>{"dma", "api"};
          });
  k["NEURON_RT_INSPECT_HOST_MEMORY"] =
      Bool("false", "1", "true", "x", [](C c) { return c.inspect_host_memory; });
  k["NEURON_RT_INSPECT_ON_FAIL"] =
      Bool("false", "1", "true", "x", [](C c) { return c.inspect_on_fail; });
  k["NEURON_RT_INSPECT_OUTPUT_DIR"] = Num("", "/tmp/prof", "/tmp/prof", "",
                                          [](C c) { return c.inspect_output_dir == "/tmp/prof"; });
  k["NEURON_RT_INSPECT_PRECACHE_ENABLE"] =
      Bool("false", "1", "true", "x", [](C c) { return c.inspect_precache_enable; });
  k["NEURON_RT_INSPECT_SYSTEM_PROFILE"] =
      Bool("true", "0", "false", "x", [](C c) { return !c.inspect_system_profile; });
  k["NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC"] =
      Num("0", "1000", "1000", "-1",
          [](C c) { return c.inspect_sys_trace_max_events_per_nc == 1000; });
  const char* kBuffers[] = {"CC_CORE_EVENT", "CC_CORE_INSTRUCTION", "DMA", "EVENT",
                            "H2D_DMA", "INSTRUCTION", "THROTTLE"};
  const char* kBufferDefaults[] = {"2", "64", "128", "64", "64", "128", "64"};
  for (int i = 0; i < 7; ++i) {
    k[std::string("NEURON_RT_PROFILE_BUF_") + kBuffers[i] + "_MB"] = Num(
        kBufferDefaults[i], "256", "256", "1.5", [i](C c) { return c.profile_buf_mib[i] == 256; });
  }
  k["NEURON_RT_ENABLE_DGE_NOTIFICATIONS"] =
      Bool("false", "1", "true", "x", [](C c) { return c.enable_dge_notifications; });
  // Debugging.
  k["NEURON_RT_DBG_DUMP_INPUTS_ON_ERR"] = Num(
      "0", "NRT_TIMEOUT", "5", "-2", [](C c) { return c.dbg_dump_inputs_on_err == 5; });
  k["NEURON_RT_DBG_INPUT_DUMP_DIRECTORY"] =
      Num("/tmp/neuron-input-dump", "/scratch/dumps", "/scratch/dumps", "",
          [](C c) { return c.dbg_input_dump_directory == "/scratch/dumps"; });
  k["NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY"] =
      Num("/tmp/neuron-core-dump/dt-%d-cid-%c", "/scratch/cd-%d", "/scratch/cd-%d", "",
          [](C c) { return c.local_core_dump_directory == "/scratch/cd-%d"; });
  k["NEURON_RT_S3_CORE_DUMP_PREFIX"] =
      Num("", "s3://bucket/dumps/%d", "s3://bucket/dumps/%d", "bucket/dumps", [](C c) {
        return c.s3_core_dump_prefix == std::optional<std::string>("s3://bucket/dumps/%d");
      });
  k["NEURON_RT_HBM_INIT_VAL"] = Num("0", "fp32_nan", "fp32_nan", "nan",
                                    [](C c) { return c.hbm_init == HbmInit::kFp32Nan; });
  // Deprecated.
  k["NEURON_RT_NUM_CORES"] = Num("", "4", "4", "all", [](C c) {
    return c.num_cores == 4 && c.visible_cores == std::vector<int>{0, 1, 2, 3};
  });
  k["NEURON_RT_VIRTUAL_CORE_SIZE"] =
      Num("", "1", "1", "x", [](C c) { return c.logical_nc_config == 1; });
  k["NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS"] = Num("", "0", "0", "x", nullptr);
  // Simulator.
  k["NEURON_SIM_INSTANCE_TYPE"] =
      Num("trn1.2xlarge", "trn2.48xlarge", "trn2.48xlarge", "",
          [](C c) { return c.sim_instance_type == "trn2.48xlarge"; });
  k["NEURON_SIM_ROOT"] = Num("", "/tmp/simroot", "/tmp/simroot", "",
                             [](C c) { return c.sim_root == "/tmp/simroot"; });
  k["NEURON_SIM_PROFILE_FORMAT"] =
      Num("json", "PFTRACE", "pftrace", "protobuf",
          [](C c) { return c.sim_profile_format == ProfileFormat::kPftrace; });
  return k;
}

TEST(VariableWalk, EveryRowHasACaseAndEveryCaseARow) {
  std::map<std::string, Case> cases = Cases();
  std::set<std::string> rows;
  for (const VariableSpec& spec : AllVariables()) {
    rows.insert(spec.name);
    EXPECT_TRUE(cases.count(spec.name)) << "no test case for " << spec.name;
  }
  for (const auto& [name, c] : cases) {
    EXPECT_TRUE(rows.count(name)) << "test case for unknown variable " << name;
  }
}

TEST(VariableWalk, DefaultsWithEmptyEnvironment) {
  Resolution r = ResolveWith({}, Trn2Large());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_TRUE(r.diagnostics.empty()) << testing::AllDiagnostics(r);
  ASSERT_EQ(r.values.size(), AllVariables().size());
  std::map<std::string, Case> cases = Cases();
  for (size_t i = 0; i < r.values.size(); ++i) {
    const Resolution::Value& v = r.values[i];
    EXPECT_EQ(v.name, AllVariables()[i].name) << "values are not in table order";
    auto it = cases.find(v.name);
    if (it == cases.end()) continue;  // reported by the test above
    EXPECT_EQ(v.value, it->second.default_value) << v.name;
    EXPECT_EQ(v.source, Source::kDefault) << v.name;
  }
}

TEST(VariableWalk, ValidValues) {
  for (const auto& [name, c] : Cases()) {
    std::map<std::string, std::string> env = c.companions;
    env[name] = c.valid;
    Resolution r = ResolveWith(env, Trn2Large());
    EXPECT_TRUE(r.ok()) << name << "=" << c.valid << ": " << r.init_error;
    const Resolution::Value* v = FindValue(r, name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(v->value, c.valid_shown) << name << "=" << c.valid;
    EXPECT_EQ(v->source, Source::kEnv) << name << "=" << c.valid;
    if (c.field_has_valid) {
      EXPECT_TRUE(c.field_has_valid(r.config)) << name << "=" << c.valid
                                               << " did not reach its typed field";
      // And the field does not hold that value by default.
      Resolution defaults = ResolveWith(c.companions, Trn2Large());
      EXPECT_FALSE(c.field_has_valid(defaults.config)) << name;
    }
  }
}

TEST(VariableWalk, InvalidValues) {
  for (const auto& [name, c] : Cases()) {
    if (c.invalid.empty()) continue;  // free text: nothing is invalid
    Resolution r = ResolveWith({{name, c.invalid}}, Trn2Large());
    if (c.invalid_kept_default) {
      EXPECT_TRUE(r.ok()) << name << ": " << r.init_error;
      EXPECT_EQ(testing::ValueOf(r, name), c.default_value) << name;
      std::vector<std::string> errors = testing::Messages(r, name, Severity::kError);
      ASSERT_EQ(errors.size(), 1u) << name << "\n" << testing::AllDiagnostics(r);
      EXPECT_NE(errors[0].find(c.invalid), std::string::npos) << errors[0];
      continue;
    }
    EXPECT_FALSE(r.ok()) << name << "=" << c.invalid << " was accepted";
    EXPECT_EQ(r.init_status, NRT_INVALID) << name;
    EXPECT_EQ(r.init_error.find(name), 0u) << r.init_error;
    EXPECT_NE(r.init_error.find(c.invalid), std::string::npos) << r.init_error;
    EXPECT_EQ(r.init_error.find('\n'), std::string::npos) << r.init_error;
    // Nothing else fails because of it.
    EXPECT_TRUE(testing::Messages(r, name, Severity::kError).empty()) << name;
  }
}

TEST(VariableWalk, ParseErrorSaysWhatIsAccepted) {
  Resolution r = ResolveWith({{"NEURON_RT_EXEC_TIMEOUT", "abc"}}, Trn2Large());
  EXPECT_EQ(r.init_error.rfind("NEURON_RT_EXEC_TIMEOUT='abc': not an unsigned integer "
                               "(accepted: ",
                               0),
            0u)
      << r.init_error;
  r = ResolveWith({{"NEURON_RT_VALIDATE_HASH", "yes"}}, Trn2Large());
  EXPECT_NE(r.init_error.find("0, 1, false, true"), std::string::npos) << r.init_error;
  r = ResolveWith({{"NEURON_RT_LOG_LEVEL", "LOUD"}}, Trn2Large());
  EXPECT_NE(r.init_error.find("ERROR, WARN, WARNING, INFO, DEBUG, TRACE, QUIET"),
            std::string::npos)
      << r.init_error;
}

TEST(VariableWalk, BooleansAcceptEveryCase) {
  for (const char* text : {"0", "1", "true", "TRUE", "True", "false", "FALSE", "fAlSe"}) {
    Resolution r = ResolveWith({{"NEURON_RT_VALIDATE_HASH", text}}, Trn2Large());
    ASSERT_TRUE(r.ok()) << text << ": " << r.init_error;
    bool expected = text[0] == '1' || text[0] == 't' || text[0] == 'T';
    EXPECT_EQ(r.config.validate_hash, expected) << text;
  }
  for (const char* text : {"", "yes", "no", "on", "2", " 1", "true "}) {
    Resolution r = ResolveWith({{"NEURON_RT_VALIDATE_HASH", text}}, Trn2Large());
    EXPECT_FALSE(r.ok()) << "'" << text << "' was accepted";
  }
}

TEST(VariableTable, RowsAreWellFormed) {
  const std::set<std::string> sections = {"Functional", "Performance tuning",
                                          "Observability", "Profiling",
                                          "Debugging", "Deprecated", "Simulator"};
  std::set<std::string> names;
  for (const VariableSpec& spec : AllVariables()) {
    EXPECT_TRUE(names.insert(spec.name).second) << "duplicate " << spec.name;
    EXPECT_TRUE(sections.count(spec.section)) << spec.name << ": " << spec.section;
    EXPECT_FALSE(spec.subsystem.empty()) << spec.name;
    EXPECT_FALSE(spec.description.empty()) << spec.name;
    EXPECT_FALSE(spec.default_text.empty()) << spec.name;
    EXPECT_EQ(spec.description.find('\n'), std::string::npos) << spec.name;
    EXPECT_EQ(spec.deprecated, spec.section == "Deprecated") << spec.name;
    EXPECT_EQ(FindVariable(spec.name), &spec);
  }
  EXPECT_EQ(FindVariable("NEURON_RT_NO_SUCH_THING"), nullptr);
}

}  // namespace
}  // namespace neuron::config
