// The AVX2 runner of f32 tile programs (f32_tiles.h), for CPUs without
// AVX-512 (AMD's before Zen 4, Intel's client parts): 8-lane vectors, the
// same steps and the same bits as the AVX-512 runner (its exp, tanh and
// log are vector_math's 8-lane ones, which the 16-lane ones copy). Built
// for the baseline x86-64-v3 (AVX2, FMA, F16C) like the rest of the
// library, so it needs no check of its own.
#include <immintrin.h>
#include <math.h>

#include <cstring>

#include "lib/kernels/f32_tiles.h"
#include "lib/kernels/vector_math_avx2.h"

namespace neuron::kernels {
namespace {

using V = __m256;
constexpr int kLanes = 8;
// Four vectors per block: a step's two operands and its result stay in
// the sixteen registers AVX2 has.
constexpr int kBlock = 4;
constexpr int kBlockLanes = kBlock * kLanes;

struct Block {
  V v[kBlock];
};

inline V Set(float x) { return _mm256_set1_ps(x); }
inline V Zero() { return _mm256_setzero_ps(); }
inline V LoadU(const float* p) { return _mm256_loadu_ps(p); }
inline void StoreA(float* p, V v) { _mm256_store_ps(p, v); }
inline void Prefetch(const char* p) { _mm_prefetch(p, _MM_HINT_T0); }
inline V IsNan(V x) { return _mm256_cmp_ps(x, x, _CMP_UNORD_Q); }

inline V Logistic(V x) {
  const V e = vec8::Exp8(_mm256_xor_ps(x, Set(-0.0f)));
  const V y = _mm256_div_ps(Set(1.0f), _mm256_add_ps(Set(1.0f), e));
  return _mm256_blendv_ps(y, x, IsNan(x));
}

// The polynomial for normal positive finite lanes, libm for the others.
inline V Log(V x) {
  const V ok = _mm256_and_ps(_mm256_cmp_ps(x, Set(1.17549435e-38f), _CMP_GE_OQ),
                             _mm256_cmp_ps(x, Set(3.40282347e+38f), _CMP_LE_OQ));
  if (_mm256_movemask_ps(ok) == 0xff) return vec8::Log8(x);
  alignas(32) float v[kLanes];
  _mm256_store_ps(v, x);
  for (float& f : v) f = logf(f);
  return _mm256_load_ps(v);
}

// The bf16 nearest to each lane (ties to even) in the low 16 bits of its
// 32, NaN kept and made quiet: element_convert.cc's rounding.
inline __m256i Bf16Bits(V x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, _mm256_castps_si256(IsNan(x)));
}

// XLA's maximum/minimum: a NaN in either operand is the result (a's first;
// the instructions return b when either is NaN).
inline V Max(V a, V b) { return _mm256_blendv_ps(_mm256_max_ps(a, b), a, IsNan(a)); }
inline V Min(V a, V b) { return _mm256_blendv_ps(_mm256_min_ps(a, b), a, IsNan(a)); }

// A step: acc = op(a, b) on one block.
// Inlined into the runner's loops (a call passes the blocks through memory).
[[gnu::always_inline]] inline void Apply(F32Op op, const Block& a, const Block& b, Block& acc) {
#define NEURON_EACH(expr)                                     \
  _Pragma("GCC unroll 4") for (int j = 0; j < kBlock; ++j) { \
    const V x = a.v[j], y = b.v[j];                           \
    (void)y;                                                  \
    acc.v[j] = (expr);                                        \
  }                                                           \
  break
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  switch (op) {
    case F32Op::kAdd: NEURON_EACH(_mm256_add_ps(x, y));
    case F32Op::kSubtract: NEURON_EACH(_mm256_sub_ps(x, y));
    case F32Op::kMultiply: NEURON_EACH(_mm256_mul_ps(x, y));
    case F32Op::kDivide: NEURON_EACH(_mm256_div_ps(x, y));
    case F32Op::kMaximum: NEURON_EACH(Max(x, y));
    case F32Op::kMinimum: NEURON_EACH(Min(x, y));
    case F32Op::kCompareEq: NEURON_EACH(_mm256_cmp_ps(x, y, _CMP_EQ_OQ));
    case F32Op::kCompareNe: NEURON_EACH(_mm256_cmp_ps(x, y, _CMP_NEQ_UQ));
    case F32Op::kCompareLt: NEURON_EACH(_mm256_cmp_ps(x, y, _CMP_LT_OQ));
    case F32Op::kCompareLe: NEURON_EACH(_mm256_cmp_ps(x, y, _CMP_LE_OQ));
    case F32Op::kCompareGt: NEURON_EACH(_mm256_cmp_ps(x, y, _CMP_GT_OQ));
    case F32Op::kCompareGe: NEURON_EACH(_mm256_cmp_ps(x, y, _CMP_GE_OQ));
    case F32Op::kAndBits: NEURON_EACH(_mm256_and_ps(x, y));
    case F32Op::kAndNotBits: NEURON_EACH(_mm256_andnot_ps(x, y));
    case F32Op::kOrBits: NEURON_EACH(_mm256_or_ps(x, y));
    case F32Op::kXorBits: NEURON_EACH(_mm256_xor_ps(x, y));
    case F32Op::kNegate: NEURON_EACH(_mm256_xor_ps(x, Set(-0.0f)));
    case F32Op::kAbs: NEURON_EACH(_mm256_andnot_ps(Set(-0.0f), x));
    case F32Op::kSqrt: NEURON_EACH(_mm256_sqrt_ps(x));
    case F32Op::kRsqrt: NEURON_EACH(_mm256_div_ps(Set(1.0f), _mm256_sqrt_ps(x)));
    case F32Op::kExp: NEURON_EACH(vec8::Exp8(x));
    case F32Op::kTanh: NEURON_EACH(vec8::Tanh8(x));
    case F32Op::kLogistic: NEURON_EACH(Logistic(x));
    case F32Op::kLog: NEURON_EACH(Log(x));
    case F32Op::kFloor: NEURON_EACH(_mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    case F32Op::kCeil: NEURON_EACH(_mm256_round_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC));
    case F32Op::kRoundNearestEven: NEURON_EACH(_mm256_round_ps(x, kNearest));
    case F32Op::kRoundBF16: NEURON_EACH(_mm256_castsi256_ps(_mm256_slli_epi32(Bf16Bits(x), 16)));
    case F32Op::kRoundF16: NEURON_EACH(_mm256_cvtph_ps(_mm256_cvtps_ph(x, kNearest)));
  }
#undef NEURON_EACH
}

// 8 lanes in a 16-bit storage format.
template <TileStorage kStorage>
inline __m128i Narrow(V x) {
  if constexpr (kStorage == TileStorage::kBF16) {
    const __m256i b = Bf16Bits(x);  // each below 2^16: packs without saturating
    return _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
  } else {
    return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
}

// Infinity or NaN: an all-ones exponent (for narrow lanes, after rounding:
// a large finite f32 may round to infinity).
inline int NonFiniteMask(V x) {
  const __m256i exp = _mm256_set1_epi32(0x7f800000);
  return _mm256_movemask_ps(
      _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(x), exp), exp)));
}
template <TileStorage kStorage>
inline int NarrowNonFiniteMask(__m128i h) {
  const __m128i exp = _mm_set1_epi16(kStorage == TileStorage::kBF16 ? 0x7f80 : 0x7c00);
  return _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, exp), exp));
}

// Writes n (<= kBlockLanes) lanes of an output in its storage format;
// true when any is NaN/Inf. A partial block goes through a staging copy
// so that nothing past the n lanes is written or judged.
template <TileStorage kStorage>
inline bool StoreBlock(const Block& v, void* out, int64_t n, bool streaming) {
  constexpr bool kNarrow = kStorage != TileStorage::kF32;
  constexpr int kBytes = kNarrow ? 2 : 4;
  alignas(32) uint8_t stage[kBlockLanes * 4];
  const bool whole = n == kBlockLanes;
  uint8_t* dst = whole ? static_cast<uint8_t*>(out) : stage;
  int bad = 0;
  _Pragma("GCC unroll 4") for (int j = 0; j < kBlock; ++j) {
    if constexpr (kNarrow) {
      const __m128i packed = Narrow<kStorage>(v.v[j]);
      if (whole) bad |= NarrowNonFiniteMask<kStorage>(packed);
      __m128i* d = reinterpret_cast<__m128i*>(dst + j * kLanes * kBytes);
      if (whole && streaming) _mm_stream_si128(d, packed);
      else _mm_storeu_si128(d, packed);
    } else {
      if (whole) bad |= NonFiniteMask(v.v[j]);
      float* d = reinterpret_cast<float*>(dst + j * kLanes * kBytes);
      if (whole && streaming) _mm256_stream_ps(d, v.v[j]);
      else _mm256_storeu_ps(d, v.v[j]);
    }
  }
  if (whole) return bad != 0;
  std::memcpy(out, stage, n * kBytes);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kNarrow) {
      uint16_t h;
      std::memcpy(&h, stage + i * 2, 2);
      const uint16_t exp = kStorage == TileStorage::kBF16 ? 0x7f80 : 0x7c00;
      bad |= (h & exp) == exp;
    } else {
      uint32_t u;
      std::memcpy(&u, stage + i * 4, 4);
      bad |= (u & 0x7f800000u) == 0x7f800000u;
    }
  }
  return bad != 0;
}

[[gnu::always_inline]] inline bool StoreOutput(TileStorage storage, const Block& v, void* out, int64_t n, bool streaming) {
  switch (storage) {
    case TileStorage::kBF16: return StoreBlock<TileStorage::kBF16>(v, out, n, streaming);
    case TileStorage::kF16: return StoreBlock<TileStorage::kF16>(v, out, n, streaming);
    case TileStorage::kF32: break;
  }
  return StoreBlock<TileStorage::kF32>(v, out, n, streaming);
}

// One vector of bf16 or f16 lanes as f32 (exact).
inline V WidenBf16(const uint16_t* p) {
  return _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
}
inline V WidenF16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

#include "lib/kernels/f32_tiles_runner.inc"  // NOLINT: inside the namespace on purpose

}  // namespace

void RunF32TilesAvx2(const F32TileJob& job) { RunTiles(job); }

}  // namespace neuron::kernels
