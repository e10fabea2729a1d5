// The AVX-512 runner of f32 tile programs (f32_tiles.h). Built with
// -march=x86-64-v4 in a target of its own, and called only after
// F32TilesAvailable(); so everything here has internal linkage and uses C
// functions and intrinsics only, never a shared inline C++ function.
#include <immintrin.h>
#include <math.h>

#include "lib/kernels/f32_tiles.h"

namespace neuron::kernels {
namespace {

using V = __m512;
constexpr int kLanes = 16;

inline V Set(float x) { return _mm512_set1_ps(x); }
inline V Zero() { return _mm512_setzero_ps(); }
inline V LoadU(const float* p) { return _mm512_loadu_ps(p); }
inline void StoreA(float* p, V v) { _mm512_store_ps(p, v); }
inline void Prefetch(const char* p) { _mm_prefetch(p, _MM_HINT_T0); }
inline __mmask16 IsNan(V x) { return _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q); }

// exp: the same range reduction and polynomial as the 8-lane Exp8 in
// vector_math.cc, so both paths give the same bits.
inline V Exp(V x) {
  const V hi = Set(88.7228317f), lo = Set(-103.972084f);
  V xc = _mm512_min_ps(_mm512_max_ps(x, lo), hi);
  V n = _mm512_roundscale_ps(_mm512_mul_ps(xc, Set(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  V r = _mm512_fnmadd_ps(n, Set(0.693359375f), xc);
  r = _mm512_fnmadd_ps(n, Set(-2.12194440e-4f), r);
  V p = Set(1.9875691500E-4f);
  p = _mm512_fmadd_ps(p, r, Set(1.3981999507E-3f));
  p = _mm512_fmadd_ps(p, r, Set(8.3334519073E-3f));
  p = _mm512_fmadd_ps(p, r, Set(4.1665795894E-2f));
  p = _mm512_fmadd_ps(p, r, Set(1.6666665459E-1f));
  p = _mm512_fmadd_ps(p, r, Set(5.0000001201E-1f));
  V r2 = _mm512_mul_ps(r, r);
  V y = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), Set(1.0f));
  __m512i ni = _mm512_cvtps_epi32(n);
  __m512i n1 = _mm512_srai_epi32(ni, 1);
  __m512i n2 = _mm512_sub_epi32(ni, n1);
  V s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, _mm512_set1_epi32(127)), 23));
  V s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, _mm512_set1_epi32(127)), 23));
  y = _mm512_mul_ps(_mm512_mul_ps(y, s1), s2);
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ), y, Set(INFINITY));
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), y, _mm512_setzero_ps());
  return _mm512_mask_blend_ps(IsNan(x), y, x);
}

// tanh: the rational approximation of vector_math.cc's Tanh8 (same
// coefficients, same order of operations).
inline V Tanh(V x) {
  // max/min return their second operand when one is NaN: NaN flows through.
  V xc = _mm512_min_ps(Set(9.0f), _mm512_max_ps(Set(-9.0f), x));
  V z = _mm512_mul_ps(xc, xc);
  V p = Set(-8.4927257678e-14f);
  p = _mm512_fmadd_ps(p, z, Set(5.2795343750e-11f));
  p = _mm512_fmadd_ps(p, z, Set(-2.0228570064e-08f));
  p = _mm512_fmadd_ps(p, z, Set(1.1155144545e-05f));
  p = _mm512_fmadd_ps(p, z, Set(3.1040369963e-03f));
  p = _mm512_fmadd_ps(p, z, Set(1.3084082726e-01f));
  p = _mm512_fmadd_ps(p, z, Set(9.9999999349e-01f));
  V q = Set(2.5462623338e-04f);
  q = _mm512_fmadd_ps(q, z, Set(2.4495501013e-02f));
  q = _mm512_fmadd_ps(q, z, Set(4.6417409862e-01f));
  q = _mm512_fmadd_ps(q, z, Set(1.0f));
  V y = _mm512_div_ps(_mm512_mul_ps(xc, p), q);
  return _mm512_min_ps(Set(1.0f), _mm512_max_ps(Set(-1.0f), y));
}

inline V Logistic(V x) {
  V e = Exp(_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN))));
  V y = _mm512_div_ps(Set(1.0f), _mm512_add_ps(Set(1.0f), e));
  return _mm512_mask_blend_ps(IsNan(x), y, x);
}

// log for normal positive finite lanes (vector_math.cc's Log8); the others
// go to libm.
inline V Log(V x) {
  __mmask16 ok = _mm512_cmp_ps_mask(x, Set(1.17549435e-38f), _CMP_GE_OQ) &
                 _mm512_cmp_ps_mask(x, Set(3.40282347e+38f), _CMP_LE_OQ);
  if (ok != 0xffff) {
    alignas(64) float v[kLanes];
    _mm512_store_ps(v, x);
    for (float& f : v) f = logf(f);
    return _mm512_load_ps(v);
  }
  __m512i xi = _mm512_castps_si512(x);
  __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(xi, 23), _mm512_set1_epi32(127));
  V m = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(xi, _mm512_set1_epi32(0x007fffff)),
                                            _mm512_set1_epi32(0x3f800000)));
  V ef = _mm512_cvtepi32_ps(e);
  __mmask16 big = _mm512_cmp_ps_mask(m, Set(1.41421356f), _CMP_GT_OQ);
  m = _mm512_mask_mul_ps(m, big, m, Set(0.5f));
  ef = _mm512_mask_add_ps(ef, big, ef, Set(1.0f));
  V f = _mm512_sub_ps(m, Set(1.0f));
  V p = Set(7.0376836292E-2f);
  p = _mm512_fmadd_ps(p, f, Set(-1.1514610310E-1f));
  p = _mm512_fmadd_ps(p, f, Set(1.1676998740E-1f));
  p = _mm512_fmadd_ps(p, f, Set(-1.2420140846E-1f));
  p = _mm512_fmadd_ps(p, f, Set(1.4249322787E-1f));
  p = _mm512_fmadd_ps(p, f, Set(-1.6668057665E-1f));
  p = _mm512_fmadd_ps(p, f, Set(2.0000714765E-1f));
  p = _mm512_fmadd_ps(p, f, Set(-2.4999993993E-1f));
  p = _mm512_fmadd_ps(p, f, Set(3.3333331174E-1f));
  V f2 = _mm512_mul_ps(f, f);
  V y = _mm512_mul_ps(_mm512_mul_ps(p, f2), f);
  y = _mm512_fmadd_ps(ef, Set(-2.12194440e-4f), y);
  y = _mm512_fnmadd_ps(f2, Set(0.5f), y);
  y = _mm512_add_ps(f, y);
  return _mm512_fmadd_ps(ef, Set(0.693359375f), y);
}

// The bf16 nearest to each lane (ties to even) in the low 16 bits of its
// 32: element_convert.cc's rounding, NaN kept and made quiet. Integer
// arithmetic rather than VCVTNEPS2BF16, which flushes subnormals.
inline __m512i Bf16Bits(V x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_mask_blend_epi32(IsNan(x), rounded, quiet);
}

// XLA's maximum/minimum: a NaN in either operand is the result (a's first).
inline V Max(V a, V b) { return _mm512_mask_blend_ps(IsNan(a), _mm512_max_ps(a, b), a); }
inline V Min(V a, V b) { return _mm512_mask_blend_ps(IsNan(a), _mm512_min_ps(a, b), a); }

// A compare's lane mask as all-ones or all-zero lanes.
inline V MaskOf(__mmask16 m) { return _mm512_castsi512_ps(_mm512_movm_epi32(m)); }

// Vectors per block: a step's operands and result for one block stay in
// registers.
constexpr int kBlock = 8;
constexpr int kBlockLanes = kBlock * kLanes;

struct Block {
  V v[kBlock];
};

// A step: acc = op(a, b) on one block.
// Inlined into the runner's loops (a call passes the blocks through memory).
[[gnu::always_inline]] inline void Apply(F32Op op, const Block& a, const Block& b, Block& acc) {
#define NEURON_EACH(expr)                                     \
  _Pragma("GCC unroll 8") for (int j = 0; j < kBlock; ++j) {                          \
    const V x = a.v[j], y = b.v[j];                            \
    (void)y;                                                   \
    acc.v[j] = (expr);                                         \
  }                                                            \
  break
  switch (op) {
    case F32Op::kAdd: NEURON_EACH(_mm512_add_ps(x, y));
    case F32Op::kSubtract: NEURON_EACH(_mm512_sub_ps(x, y));
    case F32Op::kMultiply: NEURON_EACH(_mm512_mul_ps(x, y));
    case F32Op::kDivide: NEURON_EACH(_mm512_div_ps(x, y));
    case F32Op::kMaximum: NEURON_EACH(Max(x, y));
    case F32Op::kMinimum: NEURON_EACH(Min(x, y));
    case F32Op::kCompareEq: NEURON_EACH(MaskOf(_mm512_cmp_ps_mask(x, y, _CMP_EQ_OQ)));
    case F32Op::kCompareNe: NEURON_EACH(MaskOf(_mm512_cmp_ps_mask(x, y, _CMP_NEQ_UQ)));
    case F32Op::kCompareLt: NEURON_EACH(MaskOf(_mm512_cmp_ps_mask(x, y, _CMP_LT_OQ)));
    case F32Op::kCompareLe: NEURON_EACH(MaskOf(_mm512_cmp_ps_mask(x, y, _CMP_LE_OQ)));
    case F32Op::kCompareGt: NEURON_EACH(MaskOf(_mm512_cmp_ps_mask(x, y, _CMP_GT_OQ)));
    case F32Op::kCompareGe: NEURON_EACH(MaskOf(_mm512_cmp_ps_mask(x, y, _CMP_GE_OQ)));
    case F32Op::kAndBits: NEURON_EACH(_mm512_and_ps(x, y));
    case F32Op::kAndNotBits: NEURON_EACH(_mm512_andnot_ps(x, y));
    case F32Op::kOrBits: NEURON_EACH(_mm512_or_ps(x, y));
    case F32Op::kXorBits: NEURON_EACH(_mm512_xor_ps(x, y));
    case F32Op::kNegate:
      NEURON_EACH(_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN))));
    case F32Op::kAbs: NEURON_EACH(_mm512_abs_ps(x));
    case F32Op::kSqrt: NEURON_EACH(_mm512_sqrt_ps(x));
    case F32Op::kRsqrt: NEURON_EACH(_mm512_div_ps(Set(1.0f), _mm512_sqrt_ps(x)));
    case F32Op::kExp: NEURON_EACH(Exp(x));
    case F32Op::kTanh: NEURON_EACH(Tanh(x));
    case F32Op::kLogistic: NEURON_EACH(Logistic(x));
    case F32Op::kLog: NEURON_EACH(Log(x));
    case F32Op::kFloor: NEURON_EACH(_mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    case F32Op::kCeil: NEURON_EACH(_mm512_roundscale_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC));
    case F32Op::kRoundNearestEven:
      NEURON_EACH(_mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    case F32Op::kRoundBF16:
      NEURON_EACH(_mm512_castsi512_ps(_mm512_slli_epi32(Bf16Bits(x), 16)));
    case F32Op::kRoundF16:
      NEURON_EACH(_mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
  }
#undef NEURON_EACH
}

// NaN (quiet or signalling) or an infinity.
inline __mmask16 NonFinite(V v) { return _mm512_fpclass_ps_mask(v, 0x01 | 0x08 | 0x10 | 0x80); }

// Writes n (<= kBlockLanes) lanes of an output in its storage format;
// true when any is NaN/Inf (for narrow outputs, after rounding: a large
// finite f32 may round to infinity).
template <TileStorage kStorage>
inline bool StoreBlock(const Block& v, void* out, int64_t n, bool streaming) {
  constexpr bool kNarrow = kStorage != TileStorage::kF32;
  __mmask16 bad = 0;
  auto narrow = [](V x) {
    if constexpr (kStorage == TileStorage::kBF16) return _mm512_cvtepi32_epi16(Bf16Bits(x));
    else return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  };
  // All-ones exponent: infinity or NaN.
  auto narrow_bad = [](__m256i h) {
    const __m256i exp = _mm256_set1_epi16(kStorage == TileStorage::kBF16 ? 0x7f80 : 0x7c00);
    return _mm256_cmpeq_epi16_mask(_mm256_and_si256(h, exp), exp);
  };
  float* f = static_cast<float*>(out);
  uint16_t* h = static_cast<uint16_t*>(out);
  if (n == kBlockLanes) {
    _Pragma("GCC unroll 8") for (int j = 0; j < kBlock; ++j) {
      if constexpr (kNarrow) {
        const __m256i packed = narrow(v.v[j]);
        bad |= narrow_bad(packed);
        __m256i* d = reinterpret_cast<__m256i*>(h + j * kLanes);
        if (streaming) _mm256_stream_si256(d, packed);
        else _mm256_storeu_si256(d, packed);
      } else {
        bad |= NonFinite(v.v[j]);
        if (streaming) _mm512_stream_ps(f + j * kLanes, v.v[j]);
        else _mm512_storeu_ps(f + j * kLanes, v.v[j]);
      }
    }
    return bad != 0;
  }
  for (int j = 0; j < kBlock && n > j * kLanes; ++j) {
    const int64_t rest = n - j * kLanes;
    const __mmask16 m = rest >= kLanes ? 0xffff : static_cast<__mmask16>((1u << rest) - 1);
    if constexpr (kNarrow) {
      const __m256i packed = narrow(v.v[j]);
      bad |= narrow_bad(packed) & m;
      _mm256_mask_storeu_epi16(h + j * kLanes, m, packed);
    } else {
      bad |= NonFinite(v.v[j]) & m;
      _mm512_mask_storeu_ps(f + j * kLanes, m, v.v[j]);
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
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
}
inline V WidenF16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }

#include "lib/kernels/f32_tiles_runner.inc"  // NOLINT: inside the namespace on purpose

}  // namespace

void RunF32TilesAvx512(const F32TileJob& job) { RunTiles(job); }

}  // namespace neuron::kernels
