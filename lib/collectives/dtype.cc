#include "lib/collectives/dtype.h"

#if defined(__GNUC__) && !defined(__clang__)
// The reduction loops below are the engine's hot path; -O3 lets GCC
// vectorise them with epilogues (the tree builds with -O2).
#pragma GCC optimize("O3")
#endif

#include <cmath>
#include <cstring>
#include <type_traits>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace neuron::collectives {
namespace {

template <typename T>
inline T Apply(T a, T b, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return static_cast<T>(a + b);
    case ReduceOp::kProd: return static_cast<T>(a * b);
    case ReduceOp::kMax: return a > b ? a : b;
    case ReduceOp::kMin: return a < b ? a : b;
  }
  return a;
}

// One loop per operation so each is a plain, vectorisable loop.
template <typename T>
void Native(T* __restrict dst, const T* a, const T* __restrict b, size_t n,
            ReduceOp op) {
  // Narrow unsigned types would be promoted to int, where a product can
  // overflow: compute them in uint32_t.
  using W = std::conditional_t<std::is_integral_v<T> && (sizeof(T) < 4), uint32_t, T>;
  switch (op) {
    case ReduceOp::kSum:
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(static_cast<W>(a[i]) + b[i]);
      break;
    case ReduceOp::kProd:
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<T>(static_cast<W>(a[i]) * b[i]);
      break;
    case ReduceOp::kMax:
      for (size_t i = 0; i < n; ++i) dst[i] = a[i] > b[i] ? a[i] : b[i];
      break;
    case ReduceOp::kMin:
      for (size_t i = 0; i < n; ++i) dst[i] = a[i] < b[i] ? a[i] : b[i];
      break;
  }
}

// Unsigned arithmetic for the signed products/sums so overflow wraps (as
// the device's integer units do) instead of being undefined.
template <typename S, typename U>
void SignedWrap(S* dst, const S* a, const S* b, size_t n, ReduceOp op) {
  if (op == ReduceOp::kSum || op == ReduceOp::kProd) {
    Native<U>(reinterpret_cast<U*>(dst), reinterpret_cast<const U*>(a),
              reinterpret_cast<const U*>(b), n, op);
  } else {
    Native<S>(dst, a, b, n, op);
  }
}

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t FloatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

void BF16(uint16_t* dst, const uint16_t* a, const uint16_t* b, size_t n,
          ReduceOp op) {
  for (size_t i = 0; i < n; ++i) {
    const float r = Apply(BF16ToFloat(a[i]), BF16ToFloat(b[i]), op);
    dst[i] = FloatToBF16(r);
  }
}

void F16(uint16_t* dst, const uint16_t* a, const uint16_t* b, size_t n,
         ReduceOp op) {
  size_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    __m256 r;
    switch (op) {
      case ReduceOp::kSum: r = _mm256_add_ps(x, y); break;
      case ReduceOp::kProd: r = _mm256_mul_ps(x, y); break;
      case ReduceOp::kMax: r = _mm256_max_ps(y, x); break;  // x > y ? x : y
      default: r = _mm256_min_ps(y, x); break;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
  }
#endif
  for (; i < n; ++i) {
    dst[i] = FloatToHalf(Apply(HalfToFloat(a[i]), HalfToFloat(b[i]), op));
  }
}

}  // namespace

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kU8: case DataType::kS8: return 1;
    case DataType::kU16: case DataType::kS16: case DataType::kF16:
    case DataType::kBF16: return 2;
    case DataType::kU32: case DataType::kS32: case DataType::kF32: return 4;
    case DataType::kU64: case DataType::kS64: case DataType::kF64: return 8;
  }
  return 1;
}

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kU8: return "uint8";
    case DataType::kS8: return "int8";
    case DataType::kU16: return "uint16";
    case DataType::kS16: return "int16";
    case DataType::kU32: return "uint32";
    case DataType::kS32: return "int32";
    case DataType::kU64: return "uint64";
    case DataType::kS64: return "int64";
    case DataType::kF16: return "fp16";
    case DataType::kBF16: return "bf16";
    case DataType::kF32: return "fp32";
    case DataType::kF64: return "fp64";
  }
  return "?";
}

std::optional<DataType> ParseDataType(std::string_view t) {
  for (DataType d : kAllDataTypes) {
    if (t == DataTypeName(d)) return d;
  }
  struct Alias { const char* name; DataType type; };
  static constexpr Alias kAliases[] = {
      {"u8", DataType::kU8},    {"s8", DataType::kS8},    {"i8", DataType::kS8},
      {"u16", DataType::kU16},  {"s16", DataType::kS16},  {"i16", DataType::kS16},
      {"u32", DataType::kU32},  {"s32", DataType::kS32},  {"i32", DataType::kS32},
      {"u64", DataType::kU64},  {"s64", DataType::kS64},  {"i64", DataType::kS64},
      {"f16", DataType::kF16},  {"half", DataType::kF16}, {"float16", DataType::kF16},
      {"bfloat16", DataType::kBF16},
      {"f32", DataType::kF32},  {"float", DataType::kF32}, {"float32", DataType::kF32},
      {"f64", DataType::kF64},  {"double", DataType::kF64}, {"float64", DataType::kF64},
  };
  for (const Alias& a : kAliases) {
    if (t == a.name) return a.type;
  }
  return std::nullopt;
}

const char* DataTypeNpyDescr(DataType type) {
  switch (type) {
    case DataType::kU8: return "|u1";
    case DataType::kS8: return "|i1";
    case DataType::kU16: return "<u2";
    case DataType::kS16: return "<i2";
    case DataType::kU32: return "<u4";
    case DataType::kS32: return "<i4";
    case DataType::kU64: return "<u8";
    case DataType::kS64: return "<i8";
    case DataType::kF16: return "<f2";
    case DataType::kBF16: return "<u2";
    case DataType::kF32: return "<f4";
    case DataType::kF64: return "<f8";
  }
  return "|u1";
}

bool IsFloat(DataType type) {
  return type == DataType::kF16 || type == DataType::kBF16 ||
         type == DataType::kF32 || type == DataType::kF64;
}

const char* ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

std::optional<ReduceOp> ParseReduceOp(std::string_view t) {
  for (ReduceOp op : kAllReduceOps) {
    if (t == ReduceOpName(op)) return op;
  }
  return std::nullopt;
}

void Reduce2(void* dst, const void* a, const void* b, size_t n, DataType type,
             ReduceOp op) {
  switch (type) {
    case DataType::kU8:
      return Native(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(a),
                    static_cast<const uint8_t*>(b), n, op);
    case DataType::kS8:
      return SignedWrap<int8_t, uint8_t>(static_cast<int8_t*>(dst),
                                         static_cast<const int8_t*>(a),
                                         static_cast<const int8_t*>(b), n, op);
    case DataType::kU16:
      return Native(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(a),
                    static_cast<const uint16_t*>(b), n, op);
    case DataType::kS16:
      return SignedWrap<int16_t, uint16_t>(static_cast<int16_t*>(dst),
                                           static_cast<const int16_t*>(a),
                                           static_cast<const int16_t*>(b), n, op);
    case DataType::kU32:
      return Native(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(a),
                    static_cast<const uint32_t*>(b), n, op);
    case DataType::kS32:
      return SignedWrap<int32_t, uint32_t>(static_cast<int32_t*>(dst),
                                           static_cast<const int32_t*>(a),
                                           static_cast<const int32_t*>(b), n, op);
    case DataType::kU64:
      return Native(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(a),
                    static_cast<const uint64_t*>(b), n, op);
    case DataType::kS64:
      return SignedWrap<int64_t, uint64_t>(static_cast<int64_t*>(dst),
                                           static_cast<const int64_t*>(a),
                                           static_cast<const int64_t*>(b), n, op);
    case DataType::kF16:
      return F16(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(a),
                 static_cast<const uint16_t*>(b), n, op);
    case DataType::kBF16:
      return BF16(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(a),
                  static_cast<const uint16_t*>(b), n, op);
    case DataType::kF32:
      return Native(static_cast<float*>(dst), static_cast<const float*>(a),
                    static_cast<const float*>(b), n, op);
    case DataType::kF64:
      return Native(static_cast<double*>(dst), static_cast<const double*>(a),
                    static_cast<const double*>(b), n, op);
  }
}

void ReduceInto(void* dst, const void* src, size_t n, DataType type,
                ReduceOp op) {
  Reduce2(dst, dst, src, n, type, op);
}

float BF16ToFloat(uint16_t h) { return BitsToFloat(static_cast<uint32_t>(h) << 16); }

uint16_t FloatToBF16(float f) {
  uint32_t u = FloatToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsToFloat(sign | 0x7f800000u | (man << 13));
  return BitsToFloat(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t FloatToHalf(float f) {
  const uint32_t u = FloatToBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // overflow to inf
  if (abs < 0x38800000u) {
    // Subnormal or zero: round |f| * 2^24 to an integer, ties to even.
    const float scaled = BitsToFloat(abs) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t m = abs + 0xfffu + ((abs >> 13) & 1u);  // round to nearest even
  return sign | static_cast<uint16_t>((m - 0x38000000u) >> 13);
}

double LoadAsDouble(const void* data, size_t i, DataType type) {
  switch (type) {
    case DataType::kU8: return static_cast<const uint8_t*>(data)[i];
    case DataType::kS8: return static_cast<const int8_t*>(data)[i];
    case DataType::kU16: return static_cast<const uint16_t*>(data)[i];
    case DataType::kS16: return static_cast<const int16_t*>(data)[i];
    case DataType::kU32: return static_cast<const uint32_t*>(data)[i];
    case DataType::kS32: return static_cast<const int32_t*>(data)[i];
    case DataType::kU64: return static_cast<double>(static_cast<const uint64_t*>(data)[i]);
    case DataType::kS64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DataType::kF16: return HalfToFloat(static_cast<const uint16_t*>(data)[i]);
    case DataType::kBF16: return BF16ToFloat(static_cast<const uint16_t*>(data)[i]);
    case DataType::kF32: return static_cast<const float*>(data)[i];
    case DataType::kF64: return static_cast<const double*>(data)[i];
  }
  return 0;
}

void StoreFromDouble(void* data, size_t i, DataType type, double v) {
  switch (type) {
    case DataType::kU8: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(static_cast<int64_t>(v)); return;
    case DataType::kS8: static_cast<int8_t*>(data)[i] = static_cast<int8_t>(static_cast<int64_t>(v)); return;
    case DataType::kU16: static_cast<uint16_t*>(data)[i] = static_cast<uint16_t>(static_cast<int64_t>(v)); return;
    case DataType::kS16: static_cast<int16_t*>(data)[i] = static_cast<int16_t>(static_cast<int64_t>(v)); return;
    case DataType::kU32: static_cast<uint32_t*>(data)[i] = static_cast<uint32_t>(static_cast<int64_t>(v)); return;
    case DataType::kS32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(static_cast<int64_t>(v)); return;
    case DataType::kU64: static_cast<uint64_t*>(data)[i] = static_cast<uint64_t>(v); return;
    case DataType::kS64: static_cast<int64_t*>(data)[i] = static_cast<int64_t>(v); return;
    case DataType::kF16: static_cast<uint16_t*>(data)[i] = FloatToHalf(static_cast<float>(v)); return;
    case DataType::kBF16: static_cast<uint16_t*>(data)[i] = FloatToBF16(static_cast<float>(v)); return;
    case DataType::kF32: static_cast<float*>(data)[i] = static_cast<float>(v); return;
    case DataType::kF64: static_cast<double*>(data)[i] = v; return;
  }
}

}  // namespace neuron::collectives
