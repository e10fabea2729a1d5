// What nrt_execute returns for a NaN/Inf result under each
// NEURON_RT_NUMERICAL_ERRORS_VERBOSITY, as nrt(3) documents it: none (the
// default) does not check and returns NRT_SUCCESS; critical, debug and
// verbose return NRT_EXEC_COMPLETED_WITH_NUM_ERR with the outputs written
// and the report in nrt_get_last_error; NEURON_FAIL_ON_NAN raises none to
// critical.
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/runtime/test_neff.h"

namespace {

class NumericalErrorsTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override { StartEnv(); }
  void TearDown() override {
    EndEnv({"NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "NEURON_FAIL_ON_NAN"});
  }

  // Runs log(x) * x on {-1, 0, 1, 2} (NaN, NaN, 0, finite) under the
  // current environment; returns the status and checks the outputs.
  NRT_STATUS RunLogs() {
    absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(neuron::testing::kLogHlo);
    EXPECT_TRUE(neff.ok()) << neff.status();
    EXPECT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
    nrt_model_t* model = nullptr;
    EXPECT_EQ(nrt_load(neff->data(), neff->size(), 0, -1, &model), NRT_SUCCESS)
        << nrt_get_last_error();
    nrt_tensor_info_array_t* info = nullptr;
    EXPECT_EQ(nrt_get_model_tensor_info(model, &info), NRT_SUCCESS);
    nrt_tensor_t *x = nullptr, *r = nullptr;
    EXPECT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "x", &x), NRT_SUCCESS);
    EXPECT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "r", &r), NRT_SUCCESS);
    const float xs[4] = {-1, 0, 1, 2};
    EXPECT_EQ(nrt_tensor_write(x, xs, 0, sizeof xs), NRT_SUCCESS);
    nrt_tensor_set_t *ins = nullptr, *outs = nullptr;
    nrt_allocate_tensor_set(&ins);
    nrt_allocate_tensor_set(&outs);
    nrt_add_tensor_to_tensor_set(ins, info->tensor_array[0].name, x);
    nrt_add_tensor_to_tensor_set(outs, info->tensor_array[1].name, r);
    nrt_free_model_tensor_info(info);

    const NRT_STATUS status = nrt_execute(model, ins, outs);
    last_error_ = nrt_get_last_error();
    float got[4] = {};
    EXPECT_EQ(nrt_tensor_read(r, got, 0, sizeof got), NRT_SUCCESS);
    EXPECT_TRUE(std::isnan(got[0]));  // written whatever the status
    EXPECT_FLOAT_EQ(got[3], 2 * std::log(2.0f));

    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&x);
    nrt_tensor_free(&r);
    nrt_unload(model);
    nrt_close();
    return status;
  }

  std::string last_error_;
};

TEST_F(NumericalErrorsTest, NoneIsTheDefaultAndChecksNothing) {
  EXPECT_EQ(RunLogs(), NRT_SUCCESS);
  setenv("NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "none", 1);
  EXPECT_EQ(RunLogs(), NRT_SUCCESS);
}

TEST_F(NumericalErrorsTest, EveryOtherVerbosityReportsTheStatus) {
  for (const char* verbosity : {"critical", "debug", "verbose"}) {
    setenv("NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", verbosity, 1);
    EXPECT_EQ(RunLogs(), NRT_EXEC_COMPLETED_WITH_NUM_ERR) << verbosity;
    EXPECT_NE(last_error_.find("NaN/Inf"), std::string::npos) << verbosity << ": " << last_error_;
  }
}

TEST_F(NumericalErrorsTest, FailOnNanRaisesNoneToCritical) {
  setenv("NEURON_FAIL_ON_NAN", "1", 1);
  EXPECT_EQ(RunLogs(), NRT_EXEC_COMPLETED_WITH_NUM_ERR);
  EXPECT_NE(last_error_.find("NaN/Inf"), std::string::npos) << last_error_;
}

}  // namespace
