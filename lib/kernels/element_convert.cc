#include "lib/kernels/element_convert.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

#include "lib/hlo/float_types.h"
#include "lib/kernels/narrow_float_encoder.h"

namespace neuron::kernels {
namespace {

using ET = ElementType;

uint16_t F32ToF16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
float F16ToF32(uint16_t h) { return _cvtsh_ss(h); }

// Decode tables for the 8-bit-or-narrower float types, built once.
const float* DecodeTable(ET type) {
  static std::once_flag once;
  static std::array<std::array<float, 256>, 40>* tables = nullptr;
  std::call_once(once, [] {
    tables = new std::array<std::array<float, 256>, 40>();
    for (int t = 0; t < 40; ++t) {
      if (!hlo::IsKnownElementType(t)) continue;
      ET et = static_cast<ET>(t);
      if (!IsNarrowFloat(et) || hlo::BitWidth(et) > 8) continue;
      for (int b = 0; b < 256; ++b) {
        int bits = hlo::BitWidth(et);
        (*tables)[t][b] = static_cast<float>(
            hlo::DecodeFloat(et, static_cast<uint64_t>(b) & ((1u << bits) - 1)));
      }
    }
  });
  return (*tables)[static_cast<int>(type)].data();
}

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float RoundNarrow(ET type, float v) {
  switch (type) {
    case ET::kBF16: return Bf16ToF32(F32ToBf16(v));
    case ET::kF16: return F16ToF32(F32ToF16(v));
    default:
      return DecodeTable(type)[HasNarrowFloatEncoder(type) ? EncodeNarrowFloat(type, v)
                                                           : hlo::EncodeFloat(type, v) & 0xff];
  }
}

// The neighbour of narrow value q away from zero... toward +inf when up.
float NextNarrow(ET type, float q, bool up) {
  // Step through candidates: the narrow grid is coarser than f32, so
  // nudging by the smallest f32 step and rounding toward the direction
  // finds the neighbour; do it through the encoder on a slightly moved value.
  float probe = q;
  for (int i = 0; i < 64; ++i) {
    probe = std::nextafter(probe, up ? std::numeric_limits<float>::infinity()
                                     : -std::numeric_limits<float>::infinity());
    float r = RoundNarrow(type, probe);
    if (r != q) return r;
    // Jump further by doubling the distance to speed up.
    float d = probe - q;
    probe = q + 2 * d;
  }
  return q;
}

}  // namespace

int DomainBytes(Domain d) {
  switch (d) {
    case Domain::kF32: return 4;
    case Domain::kC128: return 16;
    default: return 8;
  }
}

Domain DomainOf(ET type) {
  if (type == ET::kF64) return Domain::kF64;
  if (type == ET::kC64) return Domain::kC64;
  if (type == ET::kC128) return Domain::kC128;
  if (hlo::IsFloatingPoint(type)) return Domain::kF32;
  return Domain::kI64;
}

bool IsSupportedElementType(ET type) {
  return hlo::IsArrayType(type) &&
         (!hlo::IsComplex(type) || type == ET::kC64 || type == ET::kC128);
}

bool IsByteFloat(ET type) {
  // Not f8e8m0fnu: its 2^-127 is a bf16 subnormal, which bf16 dot
  // instructions read as zero.
  return hlo::IsFloatingPoint(type) && hlo::BitWidth(type) <= 8 && type != ET::kF8E8M0FNU;
}

void ByteFloatToBf16(ET type, const uint8_t* src, int64_t n, uint16_t* dst) {
  // The f32 value's top half is its bf16 (exact here): gather 8 values,
  // keep the high 16 bits of each.
  const float* table = DecodeTable(type);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256i lo = _mm256_srli_epi32(
        _mm256_castps_si256(_mm256_i32gather_ps(table, _mm256_cvtepu8_epi32(codes), 4)), 16);
    const __m256i hi = _mm256_srli_epi32(
        _mm256_castps_si256(_mm256_i32gather_ps(table, _mm256_cvtepu8_epi32(_mm_srli_si128(codes, 8)), 4)),
        16);
    // packus works per 128-bit half: put the halves back in order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), packed);
  }
  for (; i < n; ++i) dst[i] = F32ToBf16(table[src[i]]);
}

bool IsNarrowFloat(ET type) {
  return hlo::IsFloatingPoint(type) && type != ET::kF32 && type != ET::kF64;
}

int64_t WrapInt(ET type, int64_t v) {
  if (type == ET::kPred) return v != 0;
  int bits = hlo::BitWidth(type);
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (hlo::IsSignedInt(type) && (u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}

// Bytes per element of the types stored exactly as their domain holds
// them (loading or storing them is a copy); 0 for the others.
static int SameLayoutBytes(ET type) {
  switch (type) {
    case ET::kF32: return 4;
    case ET::kF64:
    case ET::kC64:
    case ET::kS64:
    case ET::kU64: return 8;
    case ET::kC128: return 16;
    default: return 0;
  }
}

void LoadToDomain(ET type, const uint8_t* src, int64_t n, void* dst) {
  if (int bytes = SameLayoutBytes(type)) {
    std::memcpy(dst, src, n * bytes);
    return;
  }
  switch (type) {
    case ET::kBF16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      float* d = static_cast<float*>(dst);
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm256_slli_epi32(w, 16));
      }
      for (; i < n; ++i) d[i] = Bf16ToF32(s[i]);
      return;
    }
    case ET::kF16: {
      const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
      float* d = static_cast<float*>(dst);
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
      }
      for (; i < n; ++i) d[i] = F16ToF32(s[i]);
      return;
    }
    default: break;
  }
  if (hlo::IsFloatingPoint(type)) {
    const float* table = DecodeTable(type);
    float* d = static_cast<float*>(dst);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m256i codes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i)));
      _mm256_storeu_ps(d + i, _mm256_i32gather_ps(table, codes, 4));
    }
    for (; i < n; ++i) d[i] = table[src[i]];
    return;
  }
  int64_t* d = static_cast<int64_t*>(dst);
  switch (type) {
    case ET::kPred: for (int64_t i = 0; i < n; ++i) d[i] = src[i] != 0; return;
    case ET::kS8: for (int64_t i = 0; i < n; ++i) d[i] = reinterpret_cast<const int8_t*>(src)[i]; return;
    case ET::kU8: for (int64_t i = 0; i < n; ++i) d[i] = src[i]; return;
    case ET::kS16: for (int64_t i = 0; i < n; ++i) d[i] = reinterpret_cast<const int16_t*>(src)[i]; return;
    case ET::kU16: for (int64_t i = 0; i < n; ++i) d[i] = reinterpret_cast<const uint16_t*>(src)[i]; return;
    case ET::kS32: for (int64_t i = 0; i < n; ++i) d[i] = reinterpret_cast<const int32_t*>(src)[i]; return;
    case ET::kU32: for (int64_t i = 0; i < n; ++i) d[i] = reinterpret_cast<const uint32_t*>(src)[i]; return;
    default:  // sub-byte integers: one byte per element
      for (int64_t i = 0; i < n; ++i) d[i] = WrapInt(type, src[i]);
      return;
  }
}

void StoreFromDomain(ET type, const void* src, int64_t n, uint8_t* dst) {
  if (int bytes = SameLayoutBytes(type)) {
    std::memcpy(dst, src, n * bytes);
    return;
  }
  switch (type) {
    case ET::kBF16: {
      const float* s = static_cast<const float*>(src);
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      int64_t i = 0;
      // F32ToBf16 on 8 lanes: round to nearest even, NaN stays a quiet NaN.
      const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
      const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
      for (; i + 16 <= n; i += 16) {
        __m256i half[2];
        for (int h = 0; h < 2; ++h) {
          const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 8 * h));
          const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
          const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
          const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(bias, lsb)), 16);
          const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
          half[h] = _mm256_blendv_epi8(rounded, quiet, nan);
        }
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(half[0], half[1]), 0xd8);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), packed);
      }
      for (; i < n; ++i) d[i] = F32ToBf16(s[i]);
      return;
    }
    case ET::kF16: {
      const float* s = static_cast<const float*>(src);
      uint16_t* d = reinterpret_cast<uint16_t*>(dst);
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
      }
      for (; i < n; ++i) d[i] = F32ToF16(s[i]);
      return;
    }
    default: break;
  }
  if (hlo::IsFloatingPoint(type)) {
    const float* s = static_cast<const float*>(src);
    if (HasNarrowFloatEncoder(type)) {
      EncodeNarrowFloat(type, s, n, dst);
      return;
    }
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(hlo::EncodeFloat(type, s[i]));
    return;
  }
  const int64_t* s = static_cast<const int64_t*>(src);
  switch (type) {
    case ET::kPred: for (int64_t i = 0; i < n; ++i) dst[i] = s[i] != 0; return;
    case ET::kS8: case ET::kU8: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(s[i]); return;
    case ET::kS16: case ET::kU16: for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(dst)[i] = static_cast<uint16_t>(s[i]); return;
    case ET::kS32: case ET::kU32: for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint32_t*>(dst)[i] = static_cast<uint32_t>(s[i]); return;
    default:
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(WrapInt(type, s[i]));
      return;
  }
}

void QuantizeF32(ET type, float* v, int64_t n) { QuantizeF32(type, v, n, v); }

void QuantizeF32(ET type, const float* src, int64_t n, float* v) {
  switch (type) {
    case ET::kBF16:
      for (int64_t i = 0; i < n; ++i) v[i] = Bf16ToF32(F32ToBf16(src[i]));
      return;
    case ET::kF16: {
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(v + i, _mm256_cvtph_ps(h));
      }
      for (; i < n; ++i) v[i] = F16ToF32(F32ToF16(src[i]));
      return;
    }
    default:
      if (HasNarrowFloatEncoder(type)) {
        // Encode a block, then read the values back from the table.
        const float* table = DecodeTable(type);
        uint8_t codes[1024];
        for (int64_t i = 0; i < n; i += 1024) {
          const int64_t m = std::min<int64_t>(1024, n - i);
          EncodeNarrowFloat(type, src + i, m, codes);
          for (int64_t j = 0; j < m; ++j) v[i + j] = table[codes[j]];
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) v[i] = RoundNarrow(type, src[i]);
  }
}

void QuantizeF32Stochastic(ET type, float* v, int64_t n, uint64_t seed,
                           uint64_t salt, int64_t first_index) {
  uint64_t key = Mix(seed ^ Mix(salt));
  for (int64_t i = 0; i < n; ++i) {
    float x = v[i];
    if (!std::isfinite(x)) { v[i] = RoundNarrow(type, x); continue; }
    uint64_t r = Mix(key ^ static_cast<uint64_t>(first_index + i));
    if (type == ET::kBF16) {
      // Add random low bits below the kept mantissa, then truncate.
      uint32_t u;
      std::memcpy(&u, &x, 4);
      uint32_t t = (u + static_cast<uint32_t>(r & 0xffff)) & 0xffff0000u;
      float y;
      std::memcpy(&y, &t, 4);
      v[i] = std::isfinite(y) ? y : RoundNarrow(type, x);
      continue;
    }
    float q = RoundNarrow(type, x);
    if (q == x || !std::isfinite(q)) { v[i] = q; continue; }
    float lo, hi;
    if (q < x) { lo = q; hi = NextNarrow(type, q, true); }
    else { hi = q; lo = NextNarrow(type, q, false); }
    if (!(hi > lo)) { v[i] = q; continue; }
    double p = (static_cast<double>(x) - lo) / (static_cast<double>(hi) - lo);
    double u01 = static_cast<double>(r >> 11) * 0x1.0p-53;
    v[i] = u01 < p ? hi : lo;
  }
}

double LoadDouble(ET type, const uint8_t* base, int64_t i) {
  switch (DomainOf(type)) {
    case Domain::kC64: { float f; std::memcpy(&f, base + i * 8, 4); return f; }  // real part
    case Domain::kC128: { double d; std::memcpy(&d, base + i * 16, 8); return d; }
    case Domain::kF64: { double d; std::memcpy(&d, base + i * 8, 8); return d; }
    case Domain::kF32: {
      float f;
      LoadToDomain(type, base + i * hlo::StorageBytes(type), 1, &f);
      return f;
    }
    case Domain::kI64: {
      int64_t v;
      LoadToDomain(type, base + i * hlo::StorageBytes(type), 1, &v);
      if (type == ET::kU64) return static_cast<double>(static_cast<uint64_t>(v));
      return static_cast<double>(v);
    }
  }
  return 0;
}

std::complex<double> LoadComplex(ET type, const uint8_t* base, int64_t i) {
  if (type == ET::kC64) {
    float v[2];
    std::memcpy(v, base + i * 8, 8);
    return {v[0], v[1]};
  }
  if (type == ET::kC128) {
    double v[2];
    std::memcpy(v, base + i * 16, 16);
    return {v[0], v[1]};
  }
  return {LoadDouble(type, base, i), 0.0};
}

void StoreComplex(ET type, uint8_t* base, int64_t i, std::complex<double> z) {
  if (type == ET::kC64) {
    float v[2] = {static_cast<float>(z.real()), static_cast<float>(z.imag())};
    std::memcpy(base + i * 8, v, 8);
  } else if (type == ET::kC128) {
    double v[2] = {z.real(), z.imag()};
    std::memcpy(base + i * 16, v, 16);
  } else {
    StoreDouble(type, base, i, z.real());
  }
}

void StoreDouble(ET type, uint8_t* base, int64_t i, double value) {
  int sb = hlo::StorageBytes(type);
  switch (DomainOf(type)) {
    case Domain::kC64: { float c[2] = {static_cast<float>(value), 0}; std::memcpy(base + i * 8, c, 8); return; }
    case Domain::kC128: { double c[2] = {value, 0}; std::memcpy(base + i * 16, c, 16); return; }
    case Domain::kF64: std::memcpy(base + i * 8, &value, 8); return;
    case Domain::kF32: {
      float f = static_cast<float>(value);
      if (type != ET::kF32 && type != ET::kBF16 && type != ET::kF16) {
        base[i] = static_cast<uint8_t>(hlo::EncodeFloat(type, value));
        return;
      }
      StoreFromDomain(type, &f, 1, base + i * sb);
      return;
    }
    case Domain::kI64: {
      int64_t v;
      if (std::isnan(value)) v = 0;
      else if (value >= 9.2233720368547758e18) v = std::numeric_limits<int64_t>::max();
      else if (value <= -9.2233720368547758e18) v = std::numeric_limits<int64_t>::min();
      else v = static_cast<int64_t>(value);
      StoreFromDomain(type, &v, 1, base + i * sb);
      return;
    }
  }
}

int64_t LoadInt(ET type, const uint8_t* base, int64_t i) {
  if (DomainOf(type) != Domain::kI64) return static_cast<int64_t>(LoadDouble(type, base, i));
  int64_t v;
  LoadToDomain(type, base + i * hlo::StorageBytes(type), 1, &v);
  return v;
}

void StoreInt(ET type, uint8_t* base, int64_t i, int64_t value) {
  if (DomainOf(type) != Domain::kI64) {
    StoreDouble(type, base, i, static_cast<double>(value));
    return;
  }
  StoreFromDomain(type, &value, 1, base + i * hlo::StorageBytes(type));
}

}  // namespace neuron::kernels
