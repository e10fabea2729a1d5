#include "lib/hlo/float_types.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace neuron::hlo {
namespace {

using Special = FloatSpecial;
using Format = FloatFormat;

uint64_t NanBits(const Format& f) {
  uint64_t emax = (uint64_t{1} << f.ebits) - 1;
  uint64_t mmax = (uint64_t{1} << f.mbits) - 1;
  switch (f.special) {
    case Special::kIeee: return (emax << f.mbits) | (uint64_t{1} << (f.mbits - 1));
    case Special::kFn: return (emax << f.mbits) | mmax;
    case Special::kFnuz: return uint64_t{1} << (f.ebits + f.mbits);
    case Special::kE8M0: return 0xff;
    case Special::kNone: return 0;
  }
  return 0;
}

double MaxFinite(const Format& f) {
  int64_t emax = (int64_t{1} << f.ebits) - 1;
  int64_t mmax = (int64_t{1} << f.mbits) - 1;
  int64_t e = emax, m = mmax;
  if (f.special == Special::kIeee) e = emax - 1;
  if (f.special == Special::kFn) m = mmax - 1;
  return std::ldexp(1.0 + static_cast<double>(m) / std::ldexp(1.0, f.mbits),
                    static_cast<int>(e - f.bias));
}

uint64_t EncodeMagnitude(const Format& f, double a) {
  // a is finite, positive and at most MaxFinite(f).
  int min_exp = 1 - f.bias;
  if (a < std::ldexp(1.0, min_exp)) {
    return static_cast<uint64_t>(a / std::ldexp(1.0, min_exp - f.mbits));
  }
  int e;
  double frac = std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1)
  --e;
  uint64_t mant = static_cast<uint64_t>((frac * 2.0 - 1.0) * std::ldexp(1.0, f.mbits));
  return (static_cast<uint64_t>(e + f.bias) << f.mbits) | mant;
}

}  // namespace

bool FloatFormatOf(ElementType type, FloatFormat* f) {
  switch (type) {
    case ElementType::kF16: *f = {5, 10, 15, Special::kIeee}; return true;
    case ElementType::kBF16: *f = {8, 7, 127, Special::kIeee}; return true;
    case ElementType::kF8E5M2: *f = {5, 2, 15, Special::kIeee}; return true;
    case ElementType::kF8E4M3: *f = {4, 3, 7, Special::kIeee}; return true;
    case ElementType::kF8E4M3FN: *f = {4, 3, 7, Special::kFn}; return true;
    case ElementType::kF8E4M3B11FNUZ: *f = {4, 3, 11, Special::kFnuz}; return true;
    case ElementType::kF8E3M4: *f = {3, 4, 3, Special::kIeee}; return true;
    case ElementType::kF8E5M2FNUZ: *f = {5, 2, 16, Special::kFnuz}; return true;
    case ElementType::kF8E4M3FNUZ: *f = {4, 3, 8, Special::kFnuz}; return true;
    case ElementType::kF4E2M1FN: *f = {2, 1, 1, Special::kNone}; return true;
    case ElementType::kF6E3M2FN: *f = {3, 2, 3, Special::kNone}; return true;
    case ElementType::kF6E2M3FN: *f = {2, 3, 1, Special::kNone}; return true;
    case ElementType::kF8E8M0FNU: *f = {8, 0, 127, Special::kE8M0}; return true;
    default: return false;
  }
}

uint64_t EncodeFloat(ElementType type, double value) {
  if (type == ElementType::kF64) {
    uint64_t bits;
    std::memcpy(&bits, &value, 8);
    return bits;
  }
  if (type == ElementType::kF32) {
    float v = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return bits;
  }
  Format f;
  if (!FloatFormatOf(type, &f)) return 0;
  if (f.special == Special::kE8M0) {
    if (std::isnan(value) || value <= 0) return NanBits(f);
    double e = std::nearbyint(std::log2(value));
    if (e < -127) e = -127;
    if (e > 127) e = 127;
    return static_cast<uint64_t>(e + 127);
  }
  uint64_t sign_bit = uint64_t{1} << (f.ebits + f.mbits);
  if (std::isnan(value)) return f.special == Special::kNone ? 0 : NanBits(f);
  uint64_t sign = std::signbit(value) ? sign_bit : 0;
  double a = std::fabs(value);
  double max_finite = MaxFinite(f);
  uint64_t magnitude;
  if (a == 0) {
    magnitude = 0;
  } else {
    double rounded = a;
    if (!std::isinf(a)) {
      int e;
      std::frexp(a, &e);
      int quantum_exp = std::max(e - 1, 1 - f.bias) - f.mbits;
      rounded = std::nearbyint(std::ldexp(a, -quantum_exp));
      rounded = std::ldexp(rounded, quantum_exp);
    }
    if (rounded > max_finite) {
      switch (f.special) {
        case Special::kIeee:
          return sign | (((uint64_t{1} << f.ebits) - 1) << f.mbits);
        case Special::kFn:
        case Special::kFnuz:
          return NanBits(f);
        default:
          rounded = max_finite;
      }
    }
    magnitude = EncodeMagnitude(f, rounded);
  }
  // FNUZ types have no negative zero: the pattern means NaN.
  if (f.special == Special::kFnuz && magnitude == 0) return 0;
  return sign | magnitude;
}

double DecodeFloat(ElementType type, uint64_t bits) {
  if (type == ElementType::kF64) {
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  if (type == ElementType::kF32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float v;
    std::memcpy(&v, &b, 4);
    return v;
  }
  Format f;
  if (!FloatFormatOf(type, &f)) return 0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.special == Special::kE8M0) {
    bits &= 0xff;
    return bits == 0xff ? nan : std::ldexp(1.0, static_cast<int>(bits) - 127);
  }
  int total = f.ebits + f.mbits;
  bits &= (uint64_t{1} << (total + 1)) - 1;
  uint64_t sign_bit = uint64_t{1} << total;
  uint64_t emax = (uint64_t{1} << f.ebits) - 1;
  uint64_t mmax = (uint64_t{1} << f.mbits) - 1;
  uint64_t exp = (bits >> f.mbits) & emax;
  uint64_t mant = bits & mmax;
  bool negative = (bits & sign_bit) != 0;
  if (f.special == Special::kFnuz && bits == sign_bit) return nan;
  if (f.special == Special::kIeee && exp == emax) {
    if (mant != 0) return nan;
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (f.special == Special::kFn && exp == emax && mant == mmax) return nan;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mbits);
  } else {
    v = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -f.mbits),
                   static_cast<int>(exp) - f.bias);
  }
  return negative ? -v : v;
}

}  // namespace neuron::hlo
