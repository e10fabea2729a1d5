// One test per interaction the reference states between variables, or
// between a variable and the platform.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "lib/config/config.h"
#include "tests/config/config_test_util.h"

namespace neuron::config {
namespace {

using testing::AllDiagnostics;
using testing::Messages;
using testing::ResolveWith;
using testing::SourceOf;
using testing::Trn1Small;
using testing::Trn2Large;
using testing::ValueOf;

constexpr int kNrt = 7;  // index of NRT in kLogSubmodules
constexpr int kHal = 2;

bool HasWarning(const Resolution& r, const std::string& name, const std::string& part) {
  for (const std::string& m : Messages(r, name, Severity::kWarning)) {
    if (m.find(part) != std::string::npos) return true;
  }
  return false;
}

// ---- Logging: level / location pairing ----

TEST(LogPairing, DefaultIsWarnToBothSinksWithHalAtError) {
  Resolution r = ResolveWith({}, Trn1Small());
  for (int i = 0; i < kNumLogSubmodules; ++i) {
    EXPECT_EQ(r.config.log[i].level, i == kHal ? LogLevel::kError : LogLevel::kWarn)
        << kLogSubmodules[i];
    EXPECT_TRUE(r.config.log[i].console);
    EXPECT_TRUE(r.config.log[i].syslog);
  }
}

TEST(LogPairing, LevelAloneSendsToConsoleOnly) {
  Resolution r = ResolveWith({{"NEURON_RT_LOG_LEVEL", "INFO"}}, Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  for (int i = 0; i < kNumLogSubmodules; ++i) {
    EXPECT_EQ(r.config.log[i].level, LogLevel::kInfo) << kLogSubmodules[i];
    EXPECT_TRUE(r.config.log[i].console);
    EXPECT_FALSE(r.config.log[i].syslog) << "syslog must stop";
  }
  EXPECT_EQ(ValueOf(r, "NEURON_RT_LOG_LOCATION"), "console");
  EXPECT_EQ(SourceOf(r, "NEURON_RT_LOG_LOCATION"), "derived");
  EXPECT_EQ(SourceOf(r, "NEURON_RT_LOG_LEVEL_HAL"), "derived");
}

TEST(LogPairing, LocationAloneLowersLevelToError) {
  Resolution r = ResolveWith({{"NEURON_RT_LOG_LOCATION", "syslog"}}, Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  for (int i = 0; i < kNumLogSubmodules; ++i) {
    EXPECT_EQ(r.config.log[i].level, LogLevel::kError) << kLogSubmodules[i];
    EXPECT_FALSE(r.config.log[i].console);
    EXPECT_TRUE(r.config.log[i].syslog);
  }
  EXPECT_EQ(ValueOf(r, "NEURON_RT_LOG_LEVEL"), "ERROR");
  EXPECT_EQ(SourceOf(r, "NEURON_RT_LOG_LEVEL"), "derived");
}

TEST(LogPairing, BothSetAreTakenAsGiven) {
  Resolution r = ResolveWith(
      {{"NEURON_RT_LOG_LEVEL", "warning"}, {"NEURON_RT_LOG_LOCATION", "Console"}},
      Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.log[kNrt].level, LogLevel::kWarn);
  EXPECT_EQ(r.config.log[kHal].level, LogLevel::kWarn);
  EXPECT_TRUE(r.config.log[kNrt].console);
  EXPECT_FALSE(r.config.log[kNrt].syslog);
  EXPECT_EQ(ValueOf(r, "NEURON_RT_LOG_LEVEL"), "WARN");
}

TEST(LogPairing, SubmoduleVariablesOverrideOnlyTheirSubmodule) {
  Resolution r = ResolveWith({{"NEURON_RT_LOG_LEVEL", "INFO"},
                              {"NEURON_RT_LOG_LEVEL_TDRV", "TRACE"},
                              {"NEURON_RT_LOG_LOCATION_NMGR", "syslog"}},
                             Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.log[9].level, LogLevel::kTrace);  // TDRV
  EXPECT_EQ(r.config.log[kNrt].level, LogLevel::kInfo);
  EXPECT_EQ(r.config.log[6].level, LogLevel::kInfo);  // NMGR keeps the global level
  EXPECT_FALSE(r.config.log[6].console);              // ... but its own sink
  EXPECT_TRUE(r.config.log[6].syslog);
  EXPECT_TRUE(r.config.log[kNrt].console);
  EXPECT_EQ(SourceOf(r, "NEURON_RT_LOG_LEVEL_TDRV"), "env");
  EXPECT_EQ(SourceOf(r, "NEURON_RT_LOG_LEVEL_NRT"), "derived");
}

TEST(LogPairing, SubmoduleLevelWithoutGlobalKeepsTheOthersAtDefaults) {
  Resolution r = ResolveWith({{"NEURON_RT_LOG_LEVEL_HAL", "info"}}, Trn1Small());
  EXPECT_EQ(r.config.log[kHal].level, LogLevel::kInfo);
  EXPECT_EQ(r.config.log[kNrt].level, LogLevel::kWarn);
  EXPECT_TRUE(r.config.log[kNrt].syslog);
  EXPECT_EQ(SourceOf(r, "NEURON_RT_LOG_LEVEL_NRT"), "default");
}

TEST(LogPairing, QuietIsAccepted) {
  Resolution r = ResolveWith({{"NEURON_RT_LOG_LEVEL", "quiet"}}, Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.log[kNrt].level, LogLevel::kQuiet);
}

// ---- Core allocation & topology ----

TEST(Cores, VisibleCoresBeyondTheInstanceFailFast) {
  Resolution r = ResolveWith({{"NEURON_RT_VISIBLE_CORES", "0-9"}}, Trn1Small());
  EXPECT_EQ(r.init_status, NRT_INVALID);
  EXPECT_EQ(r.init_error,
            "NEURON_RT_VISIBLE_CORES=0-9: core 9 does not exist (this instance has 2 "
            "logical NeuronCores: 0-1)");
}

TEST(Cores, LogicalCoresAreDevicesTimesCoresOverLnc) {
  Resolution r = ResolveWith({}, Trn2Large());  // 16 x 8 / 2
  EXPECT_EQ(r.config.visible_cores.size(), 64u);
  r = ResolveWith({{"NEURON_LOGICAL_NC_CONFIG", "1"}}, Trn2Large());
  EXPECT_EQ(r.config.visible_cores.size(), 128u);
  r = ResolveWith({{"NEURON_RT_VISIBLE_CORES", "64"}}, Trn2Large());
  EXPECT_FALSE(r.ok());
  r = ResolveWith({{"NEURON_RT_VISIBLE_CORES", "0,2,4,63"}}, Trn2Large());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.visible_cores, (std::vector<int>{0, 2, 4, 63}));
}

TEST(Cores, LncMustBeAPowerOfTwoDividingTheDeviceCores) {
  for (const char* bad : {"0", "3", "16"}) {
    Resolution r = ResolveWith({{"NEURON_LOGICAL_NC_CONFIG", bad}}, Trn2Large());
    EXPECT_EQ(r.init_status, NRT_INVALID) << bad;
    EXPECT_EQ(r.init_error.rfind(std::string("NEURON_LOGICAL_NC_CONFIG=") + bad, 0), 0u)
        << r.init_error;
    EXPECT_NE(r.init_error.find("accepted: 1, 2, 4, 8"), std::string::npos) << r.init_error;
  }
  Resolution r = ResolveWith({{"NEURON_LOGICAL_NC_CONFIG", "4"}}, Trn1Small());
  EXPECT_FALSE(r.ok()) << "a trn1 device has only 2 cores";
  r = ResolveWith({{"NEURON_LOGICAL_NC_CONFIG", "2"}}, Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.visible_cores.size(), 1u);
}

TEST(Cores, OnlyLnc2IsPubliclySupportedOnTrn2) {
  Resolution r = ResolveWith({{"NEURON_LOGICAL_NC_CONFIG", "1"}}, Trn2Large());
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(HasWarning(r, "NEURON_LOGICAL_NC_CONFIG", "only 2"));
}

TEST(Cores, NumCoresIsDeprecatedButApplied) {
  Resolution r = ResolveWith({{"NEURON_RT_NUM_CORES", "3"}}, Trn2Large());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.visible_cores, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(SourceOf(r, "NEURON_RT_VISIBLE_CORES"), "derived");
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_NUM_CORES", "deprecated"));
}

TEST(Cores, VisibleCoresWinOverNumCores) {
  Resolution r = ResolveWith(
      {{"NEURON_RT_NUM_CORES", "3"}, {"NEURON_RT_VISIBLE_CORES", "4-5"}}, Trn2Large());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.visible_cores, (std::vector<int>{4, 5}));
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_NUM_CORES", "ignored"));
}

TEST(Cores, NumCoresBeyondTheInstanceFails) {
  Resolution r = ResolveWith({{"NEURON_RT_NUM_CORES", "5"}}, Trn1Small());
  EXPECT_EQ(r.init_status, NRT_INVALID);
  EXPECT_NE(r.init_error.find("NEURON_RT_NUM_CORES=5"), std::string::npos);
}

TEST(Cores, VirtualCoreSizeAppliesOnlyWhenLncIsUnset) {
  Resolution r = ResolveWith({{"NEURON_RT_VIRTUAL_CORE_SIZE", "1"}}, Trn2Large());
  EXPECT_EQ(r.config.logical_nc_config, 1);
  EXPECT_EQ(ValueOf(r, "NEURON_LOGICAL_NC_CONFIG"), "1");
  EXPECT_EQ(SourceOf(r, "NEURON_LOGICAL_NC_CONFIG"), "derived");
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_VIRTUAL_CORE_SIZE", "deprecated"));

  r = ResolveWith({{"NEURON_RT_VIRTUAL_CORE_SIZE", "1"}, {"NEURON_LOGICAL_NC_CONFIG", "2"}},
                  Trn2Large());
  EXPECT_EQ(r.config.logical_nc_config, 2);
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_VIRTUAL_CORE_SIZE", "ignored"));
}

TEST(Cores, BadVirtualCoreSizeNamesTheOldVariable) {
  Resolution r = ResolveWith({{"NEURON_RT_VIRTUAL_CORE_SIZE", "3"}}, Trn2Large());
  EXPECT_EQ(r.init_error.rfind("NEURON_RT_VIRTUAL_CORE_SIZE=3", 0), 0u) << r.init_error;
}

// ---- Execution, DMA, collectives ----

TEST(Dma, QueuedRequestsAbove63WarnAndClamp) {
  Resolution r = ResolveWith({{"NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "100"}},
                             Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.xu_max_queued_requests, 63u);
  EXPECT_EQ(ValueOf(r, "NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS"), "63");
  EXPECT_EQ(SourceOf(r, "NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS"), "derived");
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "100"));
  r = ResolveWith({{"NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "63"}}, Trn1Small());
  EXPECT_EQ(r.config.xu_max_queued_requests, 63u);
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);
}

TEST(Dma, PacketizationSizeIsCappedAtOneMibMinusOne) {
  Resolution r =
      ResolveWith({{"NEURON_RT_DBG_DMA_PACKETIZATION_SIZE", "1048575"}}, Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.dma_packetization_size, 1048575u);
  for (const char* over : {"1048576", "1MiB", "2m"}) {
    r = ResolveWith({{"NEURON_RT_DBG_DMA_PACKETIZATION_SIZE", over}}, Trn1Small());
    EXPECT_EQ(r.init_status, NRT_INVALID) << over;
    EXPECT_NE(r.init_error.find(over), std::string::npos) << r.init_error;
  }
}

TEST(Collectives, MalformedStreamSplitLogsAnErrorAndKeeps3To1) {
  for (const char* bad : {"3", "a:b", "0:1", "3:0", "3:1:2", ":", "-1:1", ""}) {
    Resolution r = ResolveWith({{"NEURON_RT_CC_STREAM_SPLIT", bad}}, Trn1Small());
    EXPECT_TRUE(r.ok()) << bad;
    EXPECT_EQ(r.config.cc_stream_split_w0, 3u) << bad;
    EXPECT_EQ(r.config.cc_stream_split_w1, 1u) << bad;
    EXPECT_EQ(ValueOf(r, "NEURON_RT_CC_STREAM_SPLIT"), "3:1");
    EXPECT_EQ(Messages(r, "NEURON_RT_CC_STREAM_SPLIT", Severity::kError).size(), 1u) << bad;
  }
  Resolution r = ResolveWith({{"NEURON_RT_CC_STREAM_SPLIT", "5:2"}}, Trn1Small());
  EXPECT_EQ(r.config.cc_stream_split_w0, 5u);
  EXPECT_EQ(r.config.cc_stream_split_w1, 2u);
}

TEST(Collectives, CcDmaPacketSizeIsIgnoredWithAWarning) {
  Resolution r = ResolveWith({{"NEURON_RT_DBG_CC_DMA_PACKET_SIZE", "4096,8192"}}, Trn1Small());
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_DBG_CC_DMA_PACKET_SIZE", "ignored"));
}

TEST(Barriers, RanksPerProxyAbove1NeedsTheHwBarrier) {
  Resolution r = ResolveWith({{"NEURON_RT_RANKS_PER_NETWORK_PROXY", "2"}}, Trn1Small());
  EXPECT_EQ(r.init_status, NRT_INVALID) << "trn1 has the HW barrier off by default";
  EXPECT_NE(r.init_error.find("NEURON_RT_ENABLE_HW_EXECUTION_BARRIER"), std::string::npos);
  r = ResolveWith({{"NEURON_RT_RANKS_PER_NETWORK_PROXY", "2"},
                   {"NEURON_RT_ENABLE_HW_EXECUTION_BARRIER", "1"}},
                  Trn1Small());
  EXPECT_TRUE(r.ok()) << r.init_error;
  r = ResolveWith({{"NEURON_RT_RANKS_PER_NETWORK_PROXY", "2"}}, Trn2Large());
  EXPECT_TRUE(r.ok()) << r.init_error;
  r = ResolveWith({{"NEURON_RT_RANKS_PER_NETWORK_PROXY", "2"},
                   {"NEURON_RT_ENABLE_HW_EXECUTION_BARRIER", "0"}},
                  Trn2Large());
  EXPECT_FALSE(r.ok());
  r = ResolveWith({{"NEURON_RT_RANKS_PER_NETWORK_PROXY", "1"}}, Trn1Small());
  EXPECT_TRUE(r.ok());
}

TEST(Barriers, CpuAffinityIsCheckedAgainstTheHostCpus) {
  Resolution r =
      ResolveWith({{"NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY", "4-7"}}, Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.low_latency_tasks_cpu_affinity, (std::vector<int>{4, 5, 6, 7}));
  r = ResolveWith({{"NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY", "40-47"}}, Trn1Small());
  EXPECT_EQ(r.init_status, NRT_INVALID);
  EXPECT_EQ(r.init_error,
            "NEURON_RT_LOW_LATENCY_TASKS_CPU_AFFINITY=40-47: CPU 47 does not exist "
            "(this host has 8 CPUs: 0-7)");
}

TEST(Networking, P2pIsForcedOnWithoutDmaBufV2) {
  PlatformFacts old_driver = Trn1Small();
  old_driver.driver_has_dmabuf_v2 = false;
  Resolution r = ResolveWith({}, old_driver);
  EXPECT_TRUE(r.config.enable_p2p);
  EXPECT_EQ(SourceOf(r, "NEURON_RT_ENABLE_P2P"), "default");
  r = ResolveWith({{"NEURON_RT_ENABLE_P2P", "0"}}, old_driver);
  EXPECT_TRUE(r.config.enable_p2p);
  EXPECT_EQ(SourceOf(r, "NEURON_RT_ENABLE_P2P"), "derived");
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_ENABLE_P2P", "forced"));
  // The simulated driver has dma-buf v2: off unless asked.
  r = ResolveWith({}, Trn1Small());
  EXPECT_FALSE(r.config.enable_p2p);
}

TEST(Networking, RootCommIdMustBeHostAndPort) {
  for (const char* good : {"10.1.4.145:45654", "node-0:1234", "[::1]:80"}) {
    Resolution r = ResolveWith({{"NEURON_RT_ROOT_COMM_ID", good}}, Trn1Small());
    EXPECT_TRUE(r.ok()) << good << ": " << r.init_error;
  }
  for (const char* bad : {"10.1.4.145", ":80", "host:0", "host:99999", "::1:80"}) {
    Resolution r = ResolveWith({{"NEURON_RT_ROOT_COMM_ID", bad}}, Trn1Small());
    EXPECT_FALSE(r.ok()) << bad;
  }
}

// ---- Memory ----

TEST(Memory, RegisterHbmMrIsForcedOffWithoutMapHbm) {
  Resolution r = ResolveWith(
      {{"NEURON_RT_MAP_HBM", "0"}, {"NEURON_RT_REGISTER_HBM_MR", "1"}}, Trn2Large());
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.config.register_hbm_mr);
  EXPECT_EQ(SourceOf(r, "NEURON_RT_REGISTER_HBM_MR"), "derived");
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_REGISTER_HBM_MR", "NEURON_RT_MAP_HBM"));
  // trn1 has no HBM mapping, so the default is forced off quietly.
  r = ResolveWith({}, Trn1Small());
  EXPECT_FALSE(r.config.map_hbm);
  EXPECT_FALSE(r.config.register_hbm_mr);
  EXPECT_EQ(SourceOf(r, "NEURON_RT_REGISTER_HBM_MR"), "derived");
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);
}

TEST(Memory, MapHbmIsTrn2PlusOnly) {
  Resolution r = ResolveWith({{"NEURON_RT_MAP_HBM", "1"}}, Trn1Small());
  EXPECT_FALSE(r.config.map_hbm);
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_MAP_HBM", "trn2"));
}

TEST(Memory, ContiguousScratchpadOnTrn2Lnc1) {
  Resolution r = ResolveWith({{"NEURON_LOGICAL_NC_CONFIG", "1"}}, Trn2Large());
  EXPECT_TRUE(r.ok()) << r.init_error;
  EXPECT_FALSE(r.config.contiguous_scratchpad) << "default becomes 0 there";
  EXPECT_EQ(ValueOf(r, "NEURON_RT_CONTIGUOUS_SCRATCHPAD"), "false");

  r = ResolveWith({{"NEURON_LOGICAL_NC_CONFIG", "1"}, {"NEURON_RT_CONTIGUOUS_SCRATCHPAD", "1"}},
                  Trn2Large());
  EXPECT_EQ(r.init_status, NRT_INVALID);
  EXPECT_TRUE(r.config.contiguous_scratchpad) << "honoured, then rejected";
  EXPECT_EQ(r.init_error.rfind("NEURON_RT_CONTIGUOUS_SCRATCHPAD=1", 0), 0u) << r.init_error;

  r = ResolveWith({{"NEURON_RT_CONTIGUOUS_SCRATCHPAD", "1"}}, Trn2Large());
  EXPECT_TRUE(r.ok()) << "LNC 2 supports it";
  r = ResolveWith({{"NEURON_RT_CONTIGUOUS_SCRATCHPAD", "1"}}, Trn1Small());
  EXPECT_TRUE(r.ok()) << "trn1 LNC 1 supports it";
}

TEST(Memory, PageSizeIsIgnoredUnderContiguousScratchpad) {
  Resolution r = ResolveWith({{"NEURON_SCRATCHPAD_PAGE_SIZE", "256"}}, Trn1Small());
  EXPECT_EQ(r.config.scratchpad_page_size_mib, 256u);
  EXPECT_EQ(r.config.ScratchpadPageMibInEffect(), 64u);
  EXPECT_TRUE(HasWarning(r, "NEURON_SCRATCHPAD_PAGE_SIZE", "ignored"));
  r = ResolveWith(
      {{"NEURON_SCRATCHPAD_PAGE_SIZE", "256"}, {"NEURON_RT_CONTIGUOUS_SCRATCHPAD", "0"}},
      Trn1Small());
  EXPECT_EQ(r.config.ScratchpadPageMibInEffect(), 256u);
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);
}

TEST(Memory, HbmInitValues) {
  struct {
    const char* text;
    HbmInit mode;
    uint32_t pattern;
  } cases[] = {{"off", HbmInit::kOff, 0},
               {"OFF", HbmInit::kOff, 0},
               {"fp32_nan", HbmInit::kFp32Nan, 0},
               {"bf16_nan", HbmInit::kBf16Nan, 0},
               {"0", HbmInit::kPattern, 0},
               {"4294967295", HbmInit::kPattern, 4294967295u}};
  for (const auto& c : cases) {
    Resolution r = ResolveWith({{"NEURON_RT_HBM_INIT_VAL", c.text}}, Trn1Small());
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.init_error;
    EXPECT_EQ(r.config.hbm_init, c.mode) << c.text;
    EXPECT_EQ(r.config.hbm_init_pattern, c.pattern) << c.text;
  }
  Resolution r = ResolveWith({}, Trn1Small());
  EXPECT_EQ(r.config.hbm_init, HbmInit::kPattern) << "the default 0 still scrubs";
  r = ResolveWith({{"NEURON_RT_HBM_INIT_VAL", "4294967296"}}, Trn1Small());
  EXPECT_FALSE(r.ok());
}

// ---- Numerics ----

TEST(Numerics, FailOnNanRaisesVerbosityToCritical) {
  Resolution r = ResolveWith({{"NEURON_FAIL_ON_NAN", "1"}}, Trn1Small());
  EXPECT_EQ(r.config.numerical_errors_verbosity, NumericalVerbosity::kCritical);
  EXPECT_EQ(ValueOf(r, "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"), "critical");
  EXPECT_EQ(SourceOf(r, "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"), "derived");
  r = ResolveWith({{"NEURON_FAIL_ON_NAN", "1"}, {"NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "none"}},
                  Trn1Small());
  EXPECT_EQ(r.config.numerical_errors_verbosity, NumericalVerbosity::kCritical);
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "critical"));
  // "At least" critical: a louder choice stays.
  r = ResolveWith(
      {{"NEURON_FAIL_ON_NAN", "1"}, {"NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "verbose"}},
      Trn1Small());
  EXPECT_EQ(r.config.numerical_errors_verbosity, NumericalVerbosity::kVerbose);
  EXPECT_EQ(SourceOf(r, "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY"), "env");
}

// ---- Observability ----

TEST(Observability, OverlongOomDumpDirectoryFallsBack) {
  std::string at_limit = "/" + std::string(199, 'd');
  Resolution r = ResolveWith({{"NEURON_RT_OOM_DUMP_DIRECTORY", at_limit}}, Trn1Small());
  EXPECT_EQ(r.config.oom_dump_directory, at_limit);
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);
  r = ResolveWith({{"NEURON_RT_OOM_DUMP_DIRECTORY", at_limit + "d"}}, Trn1Small());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.config.oom_dump_directory, "/tmp");
  EXPECT_EQ(Messages(r, "NEURON_RT_OOM_DUMP_DIRECTORY", Severity::kError).size(), 1u);
}

TEST(Observability, DebugStreamBufferMustBeAPowerOfTwo) {
  for (const char* bad : {"1000", "0", "262143"}) {
    Resolution r = ResolveWith({{"NEURON_RT_DEBUG_STREAM_BUFFER_SIZE", bad}}, Trn1Small());
    EXPECT_EQ(r.init_status, NRT_INVALID) << bad;
  }
  for (const char* good : {"1", "2", "1048576"}) {
    Resolution r = ResolveWith({{"NEURON_RT_DEBUG_STREAM_BUFFER_SIZE", good}}, Trn1Small());
    EXPECT_TRUE(r.ok()) << good << ": " << r.init_error;
  }
}

// ---- Profiling ----

TEST(Profiling, InspectOnFailImpliesEnableAndModelModeDeviceOnly) {
  Resolution r = ResolveWith({{"NEURON_RT_INSPECT_ON_FAIL", "1"}}, Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_TRUE(r.config.inspect_enable);
  EXPECT_EQ(r.config.inspect_device_profile, DeviceProfileMode::kModel);
  EXPECT_FALSE(r.config.inspect_system_profile);
  EXPECT_EQ(SourceOf(r, "NEURON_RT_INSPECT_ENABLE"), "derived");
  EXPECT_EQ(SourceOf(r, "NEURON_RT_INSPECT_DEVICE_PROFILE"), "derived");
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);

  r = ResolveWith({{"NEURON_RT_INSPECT_ON_FAIL", "1"},
                   {"NEURON_RT_INSPECT_DEVICE_PROFILE", "session"},
                   {"NEURON_RT_INSPECT_ENABLE", "0"}},
                  Trn1Small());
  EXPECT_EQ(r.config.inspect_device_profile, DeviceProfileMode::kModel);
  EXPECT_TRUE(r.config.inspect_enable);
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_INSPECT_DEVICE_PROFILE", "overridden"));
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_INSPECT_ENABLE", "overridden"));
}

TEST(Profiling, WarmupOnlyInModelMode) {
  Resolution r =
      ResolveWith({{"NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", "3"}}, Trn1Small());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.config.inspect_num_warmup, 0u);
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", "ignored"));
  r = ResolveWith({{"NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", "3"},
                   {"NEURON_RT_INSPECT_DEVICE_PROFILE", "session"}},
                  Trn1Small());
  EXPECT_EQ(r.config.inspect_num_warmup, 0u);
  r = ResolveWith({{"NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", "3"},
                   {"NEURON_RT_INSPECT_ON_FAIL", "true"}},
                  Trn1Small());
  EXPECT_EQ(r.config.inspect_num_warmup, 3u) << "on-fail forces model mode";
  EXPECT_TRUE(r.diagnostics.empty()) << AllDiagnostics(r);
}

TEST(Profiling, EventFilterNcMustNameVisibleCores) {
  Resolution r = ResolveWith(
      {{"NEURON_RT_VISIBLE_CORES", "2-3"}, {"NEURON_RT_INSPECT_EVENT_FILTER_NC", "3"}},
      Trn2Large());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_EQ(r.config.inspect_event_filter_nc, (std::vector<int>{3}));
  r = ResolveWith(
      {{"NEURON_RT_VISIBLE_CORES", "2-3"}, {"NEURON_RT_INSPECT_EVENT_FILTER_NC", "0-3"}},
      Trn2Large());
  EXPECT_EQ(r.init_status, NRT_INVALID);
  EXPECT_NE(r.init_error.find("core 0 is not visible"), std::string::npos) << r.init_error;
  EXPECT_NE(r.init_error.find("2-3"), std::string::npos) << r.init_error;
}

TEST(Profiling, EventFilterTypeCategoriesNamesAndSubtraction) {
  Resolution r = ResolveWith(
      {{"NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "hardware,^cc_running"}}, Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  const auto& types = r.config.inspect_event_types;
  EXPECT_EQ(std::count(types.begin(), types.end(), "cc_running"), 0);
  EXPECT_EQ(std::count(types.begin(), types.end(), "cc_pending"), 1);
  EXPECT_EQ(std::count(types.begin(), types.end(), "dma"), 1);
  EXPECT_EQ(std::count(types.begin(), types.end(), "api"), 0) << "api is software";

  r = ResolveWith({{"NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "^software"}}, Trn1Small());
  Resolution all = ResolveWith({{"NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "hardware"}},
                               Trn1Small());
  EXPECT_EQ(r.config.inspect_event_types, all.config.inspect_event_types)
      << "subtractions alone start from every event";

  r = ResolveWith({{"NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "hardware,gpu"}}, Trn1Small());
  EXPECT_EQ(r.init_status, NRT_INVALID);
  for (const char* word : {"'gpu'", "hardware", "software", "dma", "cc_running", "api"}) {
    EXPECT_NE(r.init_error.find(word), std::string::npos) << r.init_error;
  }
}

TEST(Profiling, H2dCaptureOffWhenTheDriverLacksIt) {
  PlatformFacts old_driver = Trn1Small();
  old_driver.driver_has_h2d_dma_notifications = false;
  Resolution r = ResolveWith({}, old_driver);
  EXPECT_EQ(r.config.profile_buf_mib[4], 0u);
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_PROFILE_BUF_H2D_DMA_MB", "driver"));
}

TEST(Profiling, ZeroInstructionBufferWarns) {
  Resolution r = ResolveWith({{"NEURON_RT_PROFILE_BUF_INSTRUCTION_MB", "0"}}, Trn1Small());
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_PROFILE_BUF_INSTRUCTION_MB", "zero-sized"));
}

// ---- Debugging ----

TEST(Debugging, DumpInputsOnErrTakesZeroMinusOneOrAStatus) {
  struct {
    const char* text;
    int64_t value;
  } good[] = {{"0", 0}, {"-1", -1}, {"5", 5}, {"NRT_EXEC_OOB", 1006}, {"exec_oob", 1006}};
  for (const auto& c : good) {
    Resolution r = ResolveWith({{"NEURON_RT_DBG_DUMP_INPUTS_ON_ERR", c.text}}, Trn1Small());
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.init_error;
    EXPECT_EQ(r.config.dbg_dump_inputs_on_err, c.value) << c.text;
  }
  for (const char* bad : {"-2", "999", "NRT_NOPE", ""}) {
    Resolution r = ResolveWith({{"NEURON_RT_DBG_DUMP_INPUTS_ON_ERR", bad}}, Trn1Small());
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST(Debugging, CoreDumpsStopOnlyWhenBothLocationsAreEmpty) {
  Resolution r = ResolveWith({}, Trn1Small());
  EXPECT_TRUE(r.config.core_dump_enabled);
  r = ResolveWith({{"NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY", ""}}, Trn1Small());
  EXPECT_TRUE(r.config.core_dump_enabled);
  r = ResolveWith({{"NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY", ""},
                   {"NEURON_RT_S3_CORE_DUMP_PREFIX", ""}},
                  Trn1Small());
  ASSERT_TRUE(r.ok()) << r.init_error;
  EXPECT_FALSE(r.config.core_dump_enabled);
}

// ---- Deprecated, parsed but ignored ----

TEST(Deprecated, AsyncInflightRequestsWarnAndAreIgnored) {
  Resolution r =
      ResolveWith({{"NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "4"}}, Trn1Small());
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "nrta_"));
  r = ResolveWith({{"NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "four"}}, Trn1Small());
  EXPECT_FALSE(r.ok()) << "parsed, so a non-number is an error";
}

TEST(Deprecated, AllowLegacyNeffWarnsItIsForTesting) {
  Resolution r = ResolveWith({{"NEURON_RT_ALLOW_LEGACY_NEFF", "1"}}, Trn1Small());
  EXPECT_TRUE(HasWarning(r, "NEURON_RT_ALLOW_LEGACY_NEFF", "testing only"));
}

// ---- Resolution bookkeeping ----

TEST(Resolution, FirstFailureIsTheInitErrorLaterOnesAreDiagnostics) {
  Resolution r = ResolveWith(
      {{"NEURON_LOGICAL_NC_CONFIG", "3"}, {"NEURON_RT_DEBUG_STREAM_BUFFER_SIZE", "3"}},
      Trn1Small());
  EXPECT_EQ(r.init_error.rfind("NEURON_LOGICAL_NC_CONFIG=3", 0), 0u) << r.init_error;
  EXPECT_EQ(Messages(r, "NEURON_RT_DEBUG_STREAM_BUFFER_SIZE", Severity::kError).size(), 1u);
}

TEST(Resolution, NullEnvironmentAndDegeneratePlatformDoNotCrash) {
  PlatformFacts none;
  none.devices = 0;
  none.physical_cores_per_device = 0;
  Resolution r = Resolve(nullptr, none);
  EXPECT_FALSE(r.ok()) << "no core size fits a device without cores";
  EXPECT_TRUE(r.config.visible_cores.empty());
  r = ResolveWith({{"NEURON_RT_VISIBLE_CORES", "0"}}, none);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace neuron::config
