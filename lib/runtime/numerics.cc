#include "lib/runtime/numerics.h"

#include <cstring>

#include "lib/hlo/float_types.h"

namespace neuron::runtime {
namespace {

// Exponent all ones: NaN when the mantissa is non-zero, Inf otherwise.
template <typename Bits>
NonFiniteCount CountIeee(const void* data, int64_t count, Bits exp_mask, Bits mant_mask) {
  NonFiniteCount c;
  const Bits* v = static_cast<const Bits*>(data);
  for (int64_t i = 0; i < count; ++i) {
    Bits b;
    std::memcpy(&b, v + i, sizeof(Bits));
    if ((b & exp_mask) != exp_mask) continue;  // the common case: finite
    if (b & mant_mask) {
      ++c.nan;
    } else {
      ++c.inf;
    }
    if (c.first_index < 0) c.first_index = i;
  }
  return c;
}

}  // namespace

NonFiniteCount CountNonFinite(hlo::ElementType type, const void* data, int64_t count) {
  using hlo::ElementType;
  switch (type) {
    case ElementType::kF32:
      return CountIeee<uint32_t>(data, count, 0x7F800000u, 0x007FFFFFu);
    case ElementType::kF64:
      return CountIeee<uint64_t>(data, count, 0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull);
    case ElementType::kBF16:
      return CountIeee<uint16_t>(data, count, 0x7F80u, 0x007Fu);
    case ElementType::kF16:
      return CountIeee<uint16_t>(data, count, 0x7C00u, 0x03FFu);
    default:
      break;
  }
  NonFiniteCount c;
  if (!hlo::IsFloatingPoint(type)) return c;  // integers, pred, complex: none checked
  // Narrow floats (fp8, fp6, fp4): decode each; they are small tensors.
  const int bytes = hlo::StorageBytes(type);
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, p + i * bytes, bytes);
    double d = hlo::DecodeFloat(type, bits);
    if (d != d) {
      ++c.nan;
    } else if (d - d != 0) {
      ++c.inf;
    } else {
      continue;
    }
    if (c.first_index < 0) c.first_index = i;
  }
  return c;
}

}  // namespace neuron::runtime
