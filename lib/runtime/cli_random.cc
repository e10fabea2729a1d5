#include "lib/runtime/cli_random.h"

#include <cstring>

namespace neuron::runtime {

hlo::Literal RandomTensors::Next(const hlo::Shape& shape) {
  hlo::Literal value = hlo::Literal::Zeros(shape);
  const int64_t n = value.element_count();
  const hlo::ElementType type = shape.type;
  if (type == hlo::ElementType::kF32) {
    // The common case without per-element dispatch.
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    float* p = reinterpret_cast<float*>(value.mutable_data().data());
    for (int64_t i = 0; i < n; ++i) {
      float v = dist(engine_);
      std::memcpy(p + i, &v, sizeof v);
    }
  } else if (hlo::IsFloatingPoint(type)) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < n; ++i) value.SetDouble(i, dist(engine_));
  } else if (hlo::IsComplex(type)) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < n; ++i) {
      double re = dist(engine_);
      value.SetComplex(i, re, dist(engine_));
    }
  } else if (type == hlo::ElementType::kPred) {
    std::uniform_int_distribution<int> dist(0, 1);
    for (int64_t i = 0; i < n; ++i) value.SetInt(i, dist(engine_));
  } else {
    std::uniform_int_distribution<int> dist(0, 9);
    for (int64_t i = 0; i < n; ++i) value.SetInt(i, dist(engine_));
  }
  return value;
}

}  // namespace neuron::runtime
