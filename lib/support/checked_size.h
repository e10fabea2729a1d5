// Overflow-checked size arithmetic for sizes that come from a caller or a
// file: a sum, product or rounding that does not fit in 64 bits is nullopt,
// never a small wrapped number that a buffer would then be sized by.
#ifndef NEURON_LIB_SUPPORT_CHECKED_SIZE_H_
#define NEURON_LIB_SUPPORT_CHECKED_SIZE_H_

#include <cstdint>
#include <optional>

namespace neuron {

inline std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

inline std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t product;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// `value` rounded up to a multiple of `alignment` (which must not be 0).
inline std::optional<uint64_t> CheckedRoundUp(uint64_t value, uint64_t alignment) {
  std::optional<uint64_t> padded = CheckedAdd(value, alignment - 1);
  if (!padded) return std::nullopt;
  return *padded / alignment * alignment;
}

// Whether [offset, offset + size) lies within `total` bytes; an end past
// 2^64 is outside, whatever it wraps to.
inline bool RangeWithin(uint64_t offset, uint64_t size, uint64_t total) {
  std::optional<uint64_t> end = CheckedAdd(offset, size);
  return end && *end <= total;
}

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_CHECKED_SIZE_H_
