// What NEURON_RT_MAP_HBM changes on the simulated device: on trn2-family
// instances, with it on, nrt_get_hbm_mmap_va hands out each core's HBM and
// nrt_memcpy_to_device writes into it; with it off, or on trn1, both fail
// saying why. Run with the variable unset, set on, and set off.
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"
#include "tests/nrt/nrt_test_env.h"

namespace {

class SeedEffectsHbmMap : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override { StartEnv(); }
  void TearDown() override { EndEnv({"NEURON_SIM_INSTANCE_TYPE", "NEURON_RT_MAP_HBM"}); }
};

TEST_F(SeedEffectsHbmMap, MapHbm) {
  struct Row {
    const char* instance;
    std::optional<std::string> value;
    bool mapped;
    const char* why;  // in the last error when not mapped
  };
  const Row rows[] = {
      {"trn2.3xlarge", std::nullopt, true, ""},  // default on trn2: mapped
      {"trn2.3xlarge", "1", true, ""},
      {"trn2.3xlarge", "0", false, "NEURON_RT_MAP_HBM"},  // boundary: off
      {"trn1.2xlarge", std::nullopt, false, "trn2-family"},
      {"trn1.2xlarge", "1", false, "trn2-family"},  // forced off on trn1
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.instance) + " " + row.value.value_or("<unset>"));
    setenv("NEURON_SIM_INSTANCE_TYPE", row.instance, 1);
    if (row.value.has_value()) {
      setenv("NEURON_RT_MAP_HBM", row.value->c_str(), 1);
    } else {
      unsetenv("NEURON_RT_MAP_HBM");
    }
    ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();

    nrt_tensor_t* t = nullptr;
    ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 256, "t", &t), NRT_SUCCESS);
    const char through_tensor[] = "written through the tensor";
    ASSERT_EQ(nrt_tensor_write(t, through_tensor, 0, sizeof through_tensor), NRT_SUCCESS);
    nrt_tensor_device_allocation_info_t info{};
    ASSERT_EQ(nrt_tensor_get_device_allocation_info(t, &info), NRT_SUCCESS);

    void* va = nullptr;
    size_t size = 0;
    const NRT_STATUS got = nrt_get_hbm_mmap_va(0, info.hbm_index, &va, &size);
    if (row.mapped) {
      ASSERT_EQ(got, NRT_SUCCESS) << nrt_get_last_error();
      ASSERT_GT(size, info.physical_address + 256);
      char* at = static_cast<char*>(va) + info.physical_address;
      EXPECT_EQ(at, nrt_tensor_get_va(t));
      EXPECT_STREQ(at, through_tensor);
      // And the other way: a copy into mapped HBM is read through the tensor.
      const char through_map[] = "copied into mapped HBM";
      ASSERT_EQ(nrt_memcpy_to_device(at, through_map, sizeof through_map), NRT_SUCCESS)
          << nrt_get_last_error();
      char back[sizeof through_map] = {};
      ASSERT_EQ(nrt_tensor_read(t, back, 0, sizeof back), NRT_SUCCESS);
      EXPECT_STREQ(back, through_map);
      // One region per NeuronCore of the device (trn2.3xlarge at LNC 2: 4);
      // past the last, NRT_INVALID_HANDLE as the SDK documents.
      EXPECT_EQ(nrt_get_hbm_mmap_va(0, 3, &va, &size), NRT_SUCCESS) << nrt_get_last_error();
      EXPECT_EQ(nrt_get_hbm_mmap_va(0, 4, &va, &size), NRT_INVALID_HANDLE);
      // Outside mapped HBM is refused.
      char host[8] = {};
      EXPECT_EQ(nrt_memcpy_to_device(host, through_map, sizeof host), NRT_INVALID);
    } else {
      EXPECT_EQ(got, NRT_INVALID);
      EXPECT_NE(std::strstr(nrt_get_last_error(), row.why), nullptr) << nrt_get_last_error();
      char* at = static_cast<char*>(nrt_tensor_get_va(t));
      EXPECT_EQ(nrt_memcpy_to_device(at, "x", 2), NRT_INVALID);
      EXPECT_NE(std::strstr(nrt_get_last_error(), row.why), nullptr) << nrt_get_last_error();
      EXPECT_STREQ(at, through_tensor);  // untouched
    }
    nrt_tensor_free(&t);
    nrt_close();
  }
}

}  // namespace
