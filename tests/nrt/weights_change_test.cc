// A convolution keeps its weights reordered to oneDNN's layout for as long
// as the weight tensor's contents are unchanged. Every way the C API lets a
// caller change them (a write, a write through a slice, a model that
// updates them in place, a copy, a memset, a pointer from
// nrt_tensor_get_va) must reach the next execution: each step below checks
// the result against a plain convolution of what the tensor holds then.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nrt/nrt.h"
#include "nrt/nrt_tools_ext.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/runtime/test_neff.h"

namespace {

constexpr int kH = 6, kW = 6, kC = 8, kO = 16, kK = 3;
constexpr size_t kXCount = size_t{kH} * kW * kC;
constexpr size_t kWCount = size_t{kK} * kK * kC * kO;
constexpr size_t kYCount = size_t{kH} * kW * kO;

// NHWC activations, HWIO weights, as JAX and Keras write them.
const char kConvHlo[] = R"(HloModule conv
ENTRY main {
  x = f32[1,6,6,8] parameter(0)
  w = f32[3,3,8,16] parameter(1)
  ROOT y = f32[1,6,6,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})";

// Doubles the weights in place (the output is donated the input's tensor).
const char kDoubleHlo[] = R"(HloModule double, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY main {
  w = f32[3,3,8,16] parameter(0)
  ROOT d = f32[3,3,8,16] add(w, w)
})";

std::vector<float> Conv(const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> y(kYCount, 0.0f);
  for (int i = 0; i < kH; ++i)
    for (int j = 0; j < kW; ++j)
      for (int o = 0; o < kO; ++o) {
        double sum = 0;
        for (int a = 0; a < kK; ++a)
          for (int b = 0; b < kK; ++b) {
            const int si = i + a - 1, sj = j + b - 1;
            if (si < 0 || si >= kH || sj < 0 || sj >= kW) continue;
            for (int c = 0; c < kC; ++c)
              sum += double{x[static_cast<size_t>((si * kW + sj) * kC + c)]} *
                     w[static_cast<size_t>(((a * kK + b) * kC + c) * kO + o)];
          }
        y[static_cast<size_t>((i * kW + j) * kO + o)] = static_cast<float>(sum);
      }
  return y;
}

std::vector<float> Ramp(size_t n, float scale, float shift) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7919) % 23) + shift;
  return v;
}

class WeightsChangeTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override {
    StartEnv();
    ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
    for (auto [hlo, model] : {std::pair{kConvHlo, &conv_}, {kDoubleHlo, &double_}}) {
      absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(hlo);
      ASSERT_TRUE(neff.ok()) << neff.status();
      ASSERT_EQ(nrt_load(neff->data(), neff->size(), -1, -1, model), NRT_SUCCESS)
          << nrt_get_last_error();
    }
    for (auto [t, bytes, name] : {std::tuple{&x_, kXCount * 4, "x"},
                                  {&w_, kWCount * 4, "w"}, {&y_, kYCount * 4, "y"}}) {
      ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, bytes, name, t), NRT_SUCCESS);
    }
    x_host_ = Ramp(kXCount, 0.25f, -2.0f);
    ASSERT_EQ(nrt_tensor_write(x_, x_host_.data(), 0, kXCount * 4), NRT_SUCCESS);
  }
  void TearDown() override {
    for (nrt_tensor_t** t : {&x_, &w_, &y_}) nrt_tensor_free(t);
    if (conv_ != nullptr) nrt_unload(conv_);
    if (double_ != nullptr) nrt_unload(double_);
    EndEnv();
  }

  // Runs `model` with the named inputs and outputs.
  void Run(nrt_model_t* model, std::vector<std::pair<const char*, nrt_tensor_t*>> ins,
           std::vector<std::pair<const char*, nrt_tensor_t*>> outs) {
    nrt_tensor_set_t *in_set = nullptr, *out_set = nullptr;
    ASSERT_EQ(nrt_allocate_tensor_set(&in_set), NRT_SUCCESS);
    ASSERT_EQ(nrt_allocate_tensor_set(&out_set), NRT_SUCCESS);
    for (auto [name, t] : ins) EXPECT_EQ(nrt_add_tensor_to_tensor_set(in_set, name, t), NRT_SUCCESS);
    for (auto [name, t] : outs) EXPECT_EQ(nrt_add_tensor_to_tensor_set(out_set, name, t), NRT_SUCCESS);
    EXPECT_EQ(nrt_execute(model, in_set, out_set), NRT_SUCCESS) << nrt_get_last_error();
    nrt_destroy_tensor_set(&in_set);
    nrt_destroy_tensor_set(&out_set);
  }

  // Runs the convolution and compares it with a plain one of the weights
  // the tensor holds now.
  void ExpectConvOfCurrentWeights(const char* after) {
    std::vector<float> w(kWCount), y(kYCount);
    ASSERT_EQ(nrt_tensor_read(w_, w.data(), 0, kWCount * 4), NRT_SUCCESS);
    Run(conv_, {{"x", x_}, {"w", w_}}, {{"y", y_}});
    ASSERT_EQ(nrt_tensor_read(y_, y.data(), 0, kYCount * 4), NRT_SUCCESS);
    const std::vector<float> want = Conv(x_host_, w);
    size_t wrong = 0;
    for (size_t i = 0; i < kYCount; ++i)
      wrong += std::fabs(y[i] - want[i]) > 1e-3f * (1.0f + std::fabs(want[i]));
    EXPECT_EQ(wrong, 0u) << "after " << after << ": e.g. y[0] = " << y[0] << ", want "
                         << want[0];
  }

  nrt_model_t *conv_ = nullptr, *double_ = nullptr;
  nrt_tensor_t *x_ = nullptr, *w_ = nullptr, *y_ = nullptr;
  std::vector<float> x_host_;
};

TEST_F(WeightsChangeTest, EveryChangeOfTheWeightsReachesTheNextExecution) {
  const std::vector<float> w1 = Ramp(kWCount, 0.1f, -1.0f);
  ASSERT_EQ(nrt_tensor_write(w_, w1.data(), 0, kWCount * 4), NRT_SUCCESS);
  ExpectConvOfCurrentWeights("the first write");
  ExpectConvOfCurrentWeights("nothing (the same weights again)");

  const std::vector<float> w2 = Ramp(kWCount, -0.05f, 0.5f);
  ASSERT_EQ(nrt_tensor_write(w_, w2.data(), 0, kWCount * 4), NRT_SUCCESS);
  ExpectConvOfCurrentWeights("nrt_tensor_write");

  nrt_tensor_t* half = nullptr;
  ASSERT_EQ(nrt_tensor_allocate_slice(w_, kWCount * 2, kWCount * 2, "w[half]", &half), NRT_SUCCESS);
  const std::vector<float> w3 = Ramp(kWCount / 2, 0.3f, 0.0f);
  ASSERT_EQ(nrt_tensor_write(half, w3.data(), 0, kWCount * 2), NRT_SUCCESS);
  ExpectConvOfCurrentWeights("a write through a slice");
  nrt_tensor_free(&half);

  Run(double_, {{"w", w_}}, {{"d", w_}});
  ExpectConvOfCurrentWeights("a model that doubled the weights in place");

  nrt_tensor_t* other = nullptr;
  ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, kWCount * 4, "other", &other),
            NRT_SUCCESS);
  ASSERT_EQ(nrt_tensor_write(other, w1.data(), 0, kWCount * 4), NRT_SUCCESS);
  ASSERT_EQ(nrt_tensor_copy(other, 0, w_, 0, kWCount * 4), NRT_SUCCESS);
  ExpectConvOfCurrentWeights("nrt_tensor_copy");
  nrt_tensor_free(&other);

  ASSERT_EQ(nrt_tensor_memset(w_, kWCount * 2, 0, kWCount * 2), NRT_SUCCESS);
  ExpectConvOfCurrentWeights("nrt_tensor_memset of half");

  // Through the address: the runtime cannot see these writes at all.
  auto* va = static_cast<float*>(nrt_tensor_get_va(w_));
  ASSERT_NE(va, nullptr);
  std::memcpy(va, w2.data(), kWCount * 4);
  ExpectConvOfCurrentWeights("a write through nrt_tensor_get_va's address");
  va[5] += 3.0f;
  ExpectConvOfCurrentWeights("a second write through the same address");

  // Done with the address: tracked again, and every later change is seen.
  ASSERT_EQ(nrt_tools_tensor_written(w_), NRT_SUCCESS);
  ExpectConvOfCurrentWeights("nrt_tools_tensor_written");
  ExpectConvOfCurrentWeights("nothing (tracked again)");
  ASSERT_EQ(nrt_tensor_write(w_, w1.data(), 0, kWCount * 4), NRT_SUCCESS);
  ExpectConvOfCurrentWeights("nrt_tensor_write once tracked again");
}

}  // namespace
