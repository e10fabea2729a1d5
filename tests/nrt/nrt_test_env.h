// The environment every test of the C API starts from: the C API reads the
// process environment, as libnrt does, so each test gets a simulated
// device tree of its own and quiet logs; at the end the runtime is closed
// and the variables the test named are removed again.
#ifndef NEURON_TESTS_NRT_NRT_TEST_ENV_H_
#define NEURON_TESTS_NRT_NRT_TEST_ENV_H_

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "nrt/nrt.h"
#include "tests/device/fast_temp_dir.h"

namespace neuron::testing {

class NrtTestEnv : public ::testing::Test {
 protected:
  // `sim_root`: the device tree (default: a fresh temporary directory).
  void StartEnv(const std::string& sim_root = FastTempDir()) {
    setenv("NEURON_SIM_ROOT", sim_root.c_str(), 1);
    setenv("NEURON_RT_LOG_LEVEL", "ERROR", 1);
    log::SetSyslogSink([](int, std::string_view) {});
  }
  // nrt_close, then unsets NEURON_SIM_ROOT, NEURON_RT_LOG_LEVEL and `vars`.
  void EndEnv(std::initializer_list<const char*> vars = {}) {
    nrt_close();
    unsetenv("NEURON_SIM_ROOT");
    unsetenv("NEURON_RT_LOG_LEVEL");
    for (const char* v : vars) unsetenv(v);
    log::SetSyslogSink(nullptr);
    log::ConfigureDefaults();
  }
};

}  // namespace neuron::testing

#endif  // NEURON_TESTS_NRT_NRT_TEST_ENV_H_
