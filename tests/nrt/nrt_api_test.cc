// The C API of nrt/nrt.h, linked statically into a C++ test (the C tests of
// tests/nrt/c use the installed shared library).
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_version.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/runtime/test_neff.h"

namespace {

class NrtApiTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override { StartEnv(); }
  void TearDown() override { EndEnv(); }
};

TEST_F(NrtApiTest, LifecycleAndVersion) {
  uint32_t count = 0;
  // Core counts are answered before nrt_init too, as libnrt documents.
  ASSERT_EQ(nrt_get_visible_vnc_count(&count), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(count, 2u);
  nrt_tensor_t* tensor = nullptr;
  // Before the first nrt_init, or after an earlier test's nrt_close.
  const NRT_STATUS before = nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &tensor);
  EXPECT_TRUE(before == NRT_UNINITIALIZED || before == NRT_CLOSED) << before;
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("already initialized"), std::string::npos);
  ASSERT_EQ(nrt_get_visible_vnc_count(&count), NRT_SUCCESS);
  EXPECT_EQ(count, 2u);
  nrt_version_t version;
  ASSERT_EQ(nrt_get_version(&version, sizeof(version)), NRT_SUCCESS);
  EXPECT_EQ(version.rt_major, 2u);
  nrt_close();
  EXPECT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &tensor), NRT_CLOSED);
}

TEST_F(NrtApiTest, LoadExecuteAndReadBack) {
  absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(neuron::testing::kAddHlo);
  ASSERT_TRUE(neff.ok()) << neff.status();
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  nrt_model_t* model = nullptr;
  ASSERT_EQ(nrt_load(neff->data(), neff->size(), -1, -1, &model), NRT_SUCCESS)
      << nrt_get_last_error();
  neff->assign(neff->size(), '\0');  // the runtime keeps its own copy

  nrt_tensor_info_array_t* info = nullptr;
  ASSERT_EQ(nrt_get_model_tensor_info(model, &info), NRT_SUCCESS);
  ASSERT_EQ(info->tensor_count, 3u);
  EXPECT_STREQ(info->tensor_array[0].name, "x");
  EXPECT_EQ(info->tensor_array[0].usage, NRT_TENSOR_USAGE_INPUT);
  EXPECT_EQ(info->tensor_array[0].dtype, NRT_DTYPE_FLOAT32);
  EXPECT_EQ(info->tensor_array[0].ndim, 2u);
  EXPECT_EQ(info->tensor_array[0].shape[1], 3u);
  EXPECT_EQ(info->tensor_array[2].usage, NRT_TENSOR_USAGE_OUTPUT);
  EXPECT_EQ(info->tensor_array[2].size, 24u);
  const std::string out_name = info->tensor_array[2].name;
  nrt_free_model_tensor_info(info);

  nrt_tensor_t *x = nullptr, *y = nullptr, *out = nullptr;
  ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "x", &x), NRT_SUCCESS);
  ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 24, "y", &y), NRT_SUCCESS);
  ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "out", &out), NRT_SUCCESS);
  const float xs[6] = {1, 2, 3, 4, 5, 6}, ys[6] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  ASSERT_EQ(nrt_tensor_write(x, xs, 0, sizeof xs), NRT_SUCCESS);
  ASSERT_EQ(nrt_tensor_write(y, ys, 0, sizeof ys), NRT_SUCCESS);
  EXPECT_EQ(nrt_tensor_write(y, ys, 4, sizeof ys), NRT_INVALID);
  EXPECT_EQ(nrt_tensor_get_size(x), 24u);

  nrt_tensor_set_t *in_set = nullptr, *out_set = nullptr;
  ASSERT_EQ(nrt_allocate_tensor_set(&in_set), NRT_SUCCESS);
  ASSERT_EQ(nrt_allocate_tensor_set(&out_set), NRT_SUCCESS);
  ASSERT_EQ(nrt_add_tensor_to_tensor_set(in_set, "x", x), NRT_SUCCESS);
  // Missing input 'y' first.
  ASSERT_EQ(nrt_add_tensor_to_tensor_set(out_set, out_name.c_str(), out), NRT_SUCCESS);
  EXPECT_EQ(nrt_execute(model, in_set, out_set), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("'y'"), std::string::npos);
  ASSERT_EQ(nrt_add_tensor_to_tensor_set(in_set, "y", y), NRT_SUCCESS);
  ASSERT_EQ(nrt_execute_repeat(model, in_set, out_set, 2), NRT_SUCCESS) << nrt_get_last_error();
  nrt_tensor_t* got = nullptr;
  ASSERT_EQ(nrt_get_tensor_from_tensor_set(out_set, out_name.c_str(), &got), NRT_SUCCESS);
  EXPECT_EQ(got, out);
  float result[6];
  ASSERT_EQ(nrt_tensor_read(out, result, 0, sizeof result), NRT_SUCCESS);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(result[i], xs[i] + 0.5f);

  nrt_destroy_tensor_set(&in_set);
  nrt_destroy_tensor_set(&out_set);
  EXPECT_EQ(in_set, nullptr);
  nrt_tensor_free(&x);
  nrt_tensor_free(&y);
  nrt_tensor_free(&out);
  EXPECT_EQ(x, nullptr);
  EXPECT_EQ(nrt_unload(model), NRT_SUCCESS);
}

// A framework donates a buffer by passing one tensor as an aliased input
// and its output: the model runs in place. An output that reads its
// input's other elements (reverse) still comes out right (the input is
// read from a copy), and separate tensors leave the inputs as they were.
TEST_F(NrtApiTest, DonatedTensorsRunInPlace) {
  absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(R"(HloModule step, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
ENTRY main {
  w = f32[4] parameter(0)
  m = f32[4] parameter(1)
  n = f32[4] subtract(w, m)
  r = f32[4] reverse(m), dimensions={0}
  ROOT t = (f32[4], f32[4]) tuple(n, r)
})");
  ASSERT_TRUE(neff.ok()) << neff.status();
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  nrt_model_t* model = nullptr;
  ASSERT_EQ(nrt_load(neff->data(), neff->size(), -1, -1, &model), NRT_SUCCESS) << nrt_get_last_error();
  nrt_tensor_t *w = nullptr, *m = nullptr, *n = nullptr, *r = nullptr;
  for (auto [t, name] : {std::pair{&w, "w"}, {&m, "m"}, {&n, "n"}, {&r, "r"}})
    ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, name, t), NRT_SUCCESS);
  const float ws[4] = {10, 20, 30, 40}, ms[4] = {1, 2, 3, 4};
  ASSERT_EQ(nrt_tensor_write(w, ws, 0, sizeof ws), NRT_SUCCESS);
  ASSERT_EQ(nrt_tensor_write(m, ms, 0, sizeof ms), NRT_SUCCESS);
  auto run = [&](nrt_tensor_t* out0, nrt_tensor_t* out1) {
    nrt_tensor_set_t *in_set = nullptr, *out_set = nullptr;
    EXPECT_EQ(nrt_allocate_tensor_set(&in_set), NRT_SUCCESS);
    EXPECT_EQ(nrt_allocate_tensor_set(&out_set), NRT_SUCCESS);
    EXPECT_EQ(nrt_add_tensor_to_tensor_set(in_set, "w", w), NRT_SUCCESS);
    EXPECT_EQ(nrt_add_tensor_to_tensor_set(in_set, "m", m), NRT_SUCCESS);
    EXPECT_EQ(nrt_add_tensor_to_tensor_set(out_set, "output0", out0), NRT_SUCCESS);
    EXPECT_EQ(nrt_add_tensor_to_tensor_set(out_set, "output1", out1), NRT_SUCCESS);
    EXPECT_EQ(nrt_execute(model, in_set, out_set), NRT_SUCCESS) << nrt_get_last_error();
    nrt_destroy_tensor_set(&in_set);
    nrt_destroy_tensor_set(&out_set);
  };
  float got[4];
  run(n, r);  // separate tensors: the inputs stay
  ASSERT_EQ(nrt_tensor_read(w, got, 0, sizeof got), NRT_SUCCESS);
  EXPECT_EQ(got[0], 10);
  ASSERT_EQ(nrt_tensor_read(n, got, 0, sizeof got), NRT_SUCCESS);
  EXPECT_EQ(got[3], 36);
  run(w, m);  // donated: the results land in the inputs' tensors
  ASSERT_EQ(nrt_tensor_read(w, got, 0, sizeof got), NRT_SUCCESS);
  EXPECT_EQ(std::vector<float>(got, got + 4), (std::vector<float>{9, 18, 27, 36}));
  ASSERT_EQ(nrt_tensor_read(m, got, 0, sizeof got), NRT_SUCCESS);
  EXPECT_EQ(std::vector<float>(got, got + 4), (std::vector<float>{4, 3, 2, 1}));
  for (nrt_tensor_t** t : {&w, &m, &n, &r}) nrt_tensor_free(t);
  EXPECT_EQ(nrt_unload(model), NRT_SUCCESS);
}

// libnrt numbers the cores a process holds from 0: with
// NEURON_RT_VISIBLE_CORES=1 the only core is vnc 0, which is logical core 1.
TEST_F(NrtApiTest, CoreIndicesCountFromTheFirstVisibleCore) {
  absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(neuron::testing::kAddHlo);
  ASSERT_TRUE(neff.ok()) << neff.status();
  setenv("NEURON_RT_VISIBLE_CORES", "1", 1);
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  uint32_t visible = 0;
  ASSERT_EQ(nrt_get_visible_vnc_count(&visible), NRT_SUCCESS);
  EXPECT_EQ(visible, 1u);

  nrt_model_t* model = nullptr;
  EXPECT_EQ(nrt_load(neff->data(), neff->size(), 1, -1, &model), NRT_INVALID);
  ASSERT_EQ(nrt_load(neff->data(), neff->size(), 0, -1, &model), NRT_SUCCESS)
      << nrt_get_last_error();
  nrt_model_info_t info{};
  size_t written = 0;
  ASSERT_EQ(nrt_get_model_info(model, &info, sizeof info, &written), NRT_SUCCESS);
  EXPECT_EQ(info.vnc, 0u);

  nrt_vnc_memory_stats_t before{}, after{};
  ASSERT_EQ(nrt_get_vnc_memory_stats(0, &before, sizeof before, &written), NRT_SUCCESS)
      << nrt_get_last_error();
  EXPECT_EQ(nrt_get_vnc_memory_stats(1, &after, sizeof after, &written), NRT_INVALID);
  nrt_tensor_t* t = nullptr;
  EXPECT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 4096, "t", &t), NRT_INVALID);
  ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4096, "t", &t), NRT_SUCCESS)
      << nrt_get_last_error();
  ASSERT_EQ(nrt_get_vnc_memory_stats(0, &after, sizeof after, &written), NRT_SUCCESS);
  EXPECT_GE(after.bytes_used, before.bytes_used + 4096);

  nrt_tensor_free(&t);
  EXPECT_EQ(nrt_unload(model), NRT_SUCCESS);
  nrt_close();
  unsetenv("NEURON_RT_VISIBLE_CORES");
}

TEST_F(NrtApiTest, BadNeffGivesItsStatusAndMessage) {
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  nrt_model_t* model = nullptr;
  const char junk[] = "definitely not a NEFF";
  EXPECT_EQ(nrt_load(junk, sizeof junk, 0, -1, &model), NRT_INVALID);
  EXPECT_STRNE(nrt_get_last_error(), "");
  EXPECT_EQ(nrt_load(junk, sizeof junk, 0, 4, &model), NRT_INVALID);
}

}  // namespace
