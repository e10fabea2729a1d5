// The reducers the typed reduction paths run without their computation:
// `op(p0, p1)` for add, multiply, maximum, minimum, and, or.
#ifndef NEURON_LIB_KERNELS_SIMPLE_REDUCER_H_
#define NEURON_LIB_KERNELS_SIMPLE_REDUCER_H_

#include <type_traits>

#include "lib/hlo/instruction.h"
#include "lib/kernels/element_convert.h"

namespace neuron::kernels {

// One step of a simple reducer; maximum and minimum propagate NaN (the
// accumulator's first).
template <typename T>
inline T Combine(hlo::Opcode op, T a, T b) {
  switch (op) {
    case hlo::Opcode::kAdd: return a + b;
    case hlo::Opcode::kMultiply: return a * b;
    case hlo::Opcode::kMaximum:
      if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
      return a > b ? a : b;
    case hlo::Opcode::kMinimum:
      if constexpr (std::is_floating_point_v<T>) { if (a != a) return a; if (b != b) return b; }
      return a < b ? a : b;
    case hlo::Opcode::kAnd:
      if constexpr (std::is_integral_v<T>) return a & b; else return a;
    case hlo::Opcode::kOr:
      if constexpr (std::is_integral_v<T>) return a | b; else return a;
    default: return a;
  }
}

// Whether the typed paths (double for floats, int64 for integers) give the
// reducer's result for values of `type`.
inline bool FastOpOk(hlo::Opcode op, hlo::ElementType type) {
  if (type == hlo::ElementType::kU64) return false;  // unsigned compare in int64 would be wrong
  if (hlo::IsComplex(type)) return false;  // the fast path holds one real
  switch (op) {
    case hlo::Opcode::kAdd: case hlo::Opcode::kMultiply:
    case hlo::Opcode::kMaximum: case hlo::Opcode::kMinimum:
      return true;
    case hlo::Opcode::kAnd: case hlo::Opcode::kOr:
      return DomainOf(type) == Domain::kI64;
    default: return false;
  }
}

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_SIMPLE_REDUCER_H_
