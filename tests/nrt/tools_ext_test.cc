// What nrt_get_model_tensor_info reports for element types the SDK's
// nrt_dtype_t has and has not, and the extras that name the latter
// (nrt_tools_describe_model), as neuron-exec relies on them.
#include <cstdlib>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_tools_ext.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/runtime/test_neff.h"

namespace {

constexpr const char* kMixedTypes = R"(
HloModule mixed
ENTRY main {
  p = pred[2] parameter(0)
  d = f64[3] parameter(1)
  z = c64[4] parameter(2)
  h = bf16[5] parameter(3)
  f = f32[6] parameter(4)
  n = pred[2] not(p)
  dd = f64[3] add(d, d)
  zz = c64[4] multiply(z, z)
  ROOT t = (pred[2], f64[3], c64[4], bf16[5], f32[6]) tuple(n, dd, zz, h, f)
})";

class ToolsExtTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override {
    StartEnv();
    ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
    absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(kMixedTypes);
    ASSERT_TRUE(neff.ok()) << neff.status();
    neff_ = *neff;
    ASSERT_EQ(nrt_load(neff_.data(), neff_.size(), 0, -1, &model_), NRT_SUCCESS) << nrt_get_last_error();
  }
  void TearDown() override {
    if (model_ != nullptr) nrt_unload(model_);
    EndEnv();
  }
  std::string neff_;
  nrt_model_t* model_ = nullptr;
};

TEST_F(ToolsExtTest, TensorInfoIsExactWhereTheSdkEnumHasTheType) {
  nrt_tensor_info_array_t* info = nullptr;
  ASSERT_EQ(nrt_get_model_tensor_info(model_, &info), NRT_SUCCESS);
  std::map<std::string, const nrt_tensor_info_t*> inputs;
  for (uint64_t i = 0; i < info->tensor_count; ++i) {
    if (info->tensor_array[i].usage == NRT_TENSOR_USAGE_INPUT) inputs[info->tensor_array[i].name] = &info->tensor_array[i];
  }
  ASSERT_EQ(inputs.size(), 5u);
  EXPECT_EQ(inputs["h"]->dtype, NRT_DTYPE_BFLOAT16);
  EXPECT_EQ(inputs["f"]->dtype, NRT_DTYPE_FLOAT32);
  // No value in the SDK's enum: UNKNOWN (pred is not passed off as uint8),
  // sizes and shapes still exact.
  EXPECT_EQ(inputs["p"]->dtype, NRT_DTYPE_UNKNOWN);
  EXPECT_EQ(inputs["p"]->size, 2u);
  EXPECT_EQ(inputs["d"]->dtype, NRT_DTYPE_UNKNOWN);
  EXPECT_EQ(inputs["d"]->size, 24u);
  EXPECT_EQ(inputs["z"]->dtype, NRT_DTYPE_UNKNOWN);
  EXPECT_EQ(inputs["z"]->size, 32u);
  ASSERT_EQ(inputs["z"]->ndim, 1u);
  EXPECT_EQ(inputs["z"]->shape[0], 4u);
  nrt_free_model_tensor_info(info);
}

TEST_F(ToolsExtTest, DescribeModelNamesEveryTypeExactly) {
  char* text = nullptr;
  ASSERT_EQ(nrt_tools_describe_model(model_, &text), NRT_SUCCESS) << nrt_get_last_error();
  const nlohmann::json doc = nlohmann::json::parse(text);
  nrt_tools_free(text);
  EXPECT_EQ(doc["name"], "mixed");
  std::map<std::string, std::string> types;
  for (const auto& t : doc["inputs"]) types[t["name"]] = t["dtype"];
  EXPECT_EQ(types["p"], "bool");
  EXPECT_EQ(types["d"], "float64");
  EXPECT_EQ(types["z"], "complex64");
  EXPECT_EQ(types["h"], "bfloat16");
  ASSERT_EQ(doc["outputs"].size(), 5u);
  EXPECT_EQ(doc["outputs"][2]["dtype"], "complex64");
  EXPECT_EQ(doc["outputs"][2]["bytes"], 32);
  EXPECT_TRUE(doc["plan"]["total"].is_number());
  EXPECT_TRUE(doc["load_ms"]["total"].is_number());
}

TEST_F(ToolsExtTest, ExtrasRefuseBadHandles) {
  char* text = nullptr;
  EXPECT_EQ(nrt_tools_describe_model(nullptr, &text), NRT_INVALID_HANDLE);
  EXPECT_EQ(nrt_tools_describe_model(model_, nullptr), NRT_INVALID);
  EXPECT_EQ(nrt_tools_describe_core_memory(0, nullptr), NRT_INVALID);
  EXPECT_EQ(nrt_tools_describe_core_memory(9999, &text), NRT_INVALID);
  EXPECT_EQ(text, nullptr);
  EXPECT_EQ(nrt_tools_set_model_feed(nullptr, nullptr), NRT_INVALID_HANDLE);
  uint64_t trips = 99, loop_ns = 99;
  EXPECT_EQ(nrt_tools_last_loop_trips(nullptr, &trips, &loop_ns), NRT_INVALID_HANDLE);
  EXPECT_EQ(nrt_tools_last_loop_trips(model_, nullptr, &loop_ns), NRT_INVALID);
  // Not executed yet: no trips; the time is optional.
  EXPECT_EQ(nrt_tools_last_loop_trips(model_, &trips, &loop_ns), NRT_SUCCESS);
  EXPECT_EQ(trips, 0u);
  EXPECT_EQ(loop_ns, 0u);
  EXPECT_EQ(nrt_tools_last_loop_trips(model_, &trips, nullptr), NRT_SUCCESS);
}

}  // namespace
