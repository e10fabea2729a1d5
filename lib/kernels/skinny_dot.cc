#include "lib/kernels/skinny_dot.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "lib/kernels/bf16_pair_product.h"
#include "lib/kernels/data_movement.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/gemm.h"
#include "lib/kernels/kept_transpose.h"
#include "lib/kernels/lazy_scratch.h"
#include "lib/kernels/low_precision_gemm.h"
#include "lib/kernels/skinny_product.h"
#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

// Real floats computed in f32 (f64 keeps the general dot's f64 products).
bool IsF32Domain(ET type) { return hlo::IsFloatingPoint(type) && !hlo::IsComplex(type) && type != ET::kF64; }

int64_t Product(const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
  int64_t p = 1;
  for (int64_t d : which) p *= dims[d];
  return p;
}

// bf16 against bf16 on a CPU with AVX512_BF16: the pair products read both
// operands as stored, nothing widened.
bool TakesBf16Pairs(ET a, ET b) { return a == ET::kBF16 && b == ET::kBF16 && Bf16PairProductAvailable(); }

// An operand permuted into scratch (in its stored type) when its dims are
// not already in the order wanted.
class Permutation {
 public:
  void Init(const hlo::Shape& s, std::vector<int64_t> perm) {
    perm_ = std::move(perm);
    if (IsIdentityPermutation(perm_)) return;
    std::vector<int64_t> dims;
    for (int64_t p : perm_) dims.push_back(s.dims[p]);
    permuted_ = Buf::Of(s.type, dims);
    bytes_.resize(static_cast<size_t>(permuted_.bytes) + 1);
  }
  const uint8_t* Apply(const Buf& in) {
    if (bytes_.empty()) return in.data;
    permuted_.data = bytes_.data();
    Transpose(in, perm_, permuted_);
    return permuted_.data;
  }

 private:
  std::vector<int64_t> perm_;
  Buf permuted_;
  LazyScratch bytes_;
};

class SkinnyDot : public DotKernel {
 public:
  // `w_is_lhs`: which operand is the matrix. False when it cannot run here,
  // or, with `in_place_only`, when the matrix would have to be permuted.
  bool Init(const hlo::Shape& lhs, const hlo::Shape& rhs, const hlo::DotDims& d, const hlo::Shape& out,
            bool w_is_lhs, bool in_place_only) {
    w_is_lhs_ = w_is_lhs;
    const hlo::Shape& x = w_is_lhs ? rhs : lhs;
    const hlo::Shape& w = w_is_lhs ? lhs : rhs;
    const std::vector<int64_t>& xb = w_is_lhs ? d.rhs_batch : d.lhs_batch;
    const std::vector<int64_t>& wb = w_is_lhs ? d.lhs_batch : d.rhs_batch;
    const std::vector<int64_t>& xc = w_is_lhs ? d.rhs_contracting : d.lhs_contracting;
    const std::vector<int64_t>& wc = w_is_lhs ? d.lhs_contracting : d.rhs_contracting;
    if (xb.size() != wb.size() || xc.size() != wc.size()) return false;
    x_type_ = x.type;
    w_type_ = w.type;
    out_type_ = out.type;
    batch_ = Product(w.dims, wb);
    k_ = Product(w.dims, wc);
    const std::vector<int64_t> xf = DotFreeDims(x.rank(), xb, xc), wf = DotFreeDims(w.rank(), wb, wc);
    m_ = Product(x.dims, xf);
    n_ = Product(w.dims, wf);
    int64_t out_count = 1;
    for (int64_t dim : out.dims) out_count *= dim;
    if (m_ > kSkinnyRows || batch_ * m_ * n_ != out_count) return false;

    // The contracting pairs in the matrix's order of its contracting dims.
    std::vector<size_t> pairs(wc.size());
    std::iota(pairs.begin(), pairs.end(), 0);
    std::sort(pairs.begin(), pairs.end(), [&](size_t a, size_t b) { return wc[a] < wc[b]; });
    bool batch_leads = true;
    for (size_t t = 0; t < wb.size(); ++t) batch_leads = batch_leads && wb[t] == static_cast<int64_t>(t);
    bool adjacent = true;
    for (size_t t = 1; t < pairs.size(); ++t) adjacent = adjacent && wc[pairs[t]] == wc[pairs[t - 1]] + 1;

    std::vector<int64_t> x_perm = xb, w_perm;
    x_perm.insert(x_perm.end(), xf.begin(), xf.end());
    if (batch_leads && adjacent) {
      // Read in place as [batch][P][k][Q]: P the free dims before the
      // contracting ones, Q those after.
      const int64_t first = wc.empty() ? static_cast<int64_t>(wb.size()) : wc[pairs[0]];
      q_ = 1;
      for (int64_t f : wf)
        if (f > first) q_ *= w.dims[f];
      for (size_t t : pairs) x_perm.push_back(xc[t]);
      for (int64_t i = 0; i < w.rank(); ++i) w_perm.push_back(i);
    } else {
      if (in_place_only) return false;
      // Otherwise the matrix is permuted to [batch][k][n] each call.
      q_ = n_;
      w_perm = wb;
      w_perm.insert(w_perm.end(), wc.begin(), wc.end());
      w_perm.insert(w_perm.end(), wf.begin(), wf.end());
      x_perm.insert(x_perm.end(), xc.begin(), xc.end());
    }
    x_.Init(x, x_perm);
    w_.Init(w, w_perm);
    pairs_ = TakesBf16Pairs(x_type_, w_type_);
    if (!pairs_) xs_.resize(static_cast<size_t>(m_ * k_) * sizeof(float) + 64);
    // Sums go straight to the output where it is f32 [m, n].
    if (w_is_lhs_ || out_type_ != ET::kF32) acc_.resize(static_cast<size_t>(m_ * n_) * sizeof(float) + 64);
    if (w_is_lhs_) transposed_.resize(static_cast<size_t>(m_ * n_) * sizeof(float) + 64);
    tile_blocks_ = q_ != n_ && q_ > 1 && pairs_ && m_ >= 3 && k_ % kRowsPerPart == 0 && q_ % 32 == 0 &&
                   Bf16TilesAvailable();
    // A [k, n] matrix (or blocks of [k, q]) against rows enough for the
    // tiles: once its contents stay the same from call to call, its
    // transpose is kept and read as [n, k] (kept_transpose.h).
    if (pairs_ && q_ > 1 && m_ >= 3 && batch_ == 1 && IsIdentityPermutation(w_perm) && Bf16TilesAvailable())
      kept_ = std::make_unique<KeptTranspose>(n_ / q_, k_, q_);
    if (q_ == n_ || tile_blocks_) {
      max_row_parts_ = std::min(ThreadPool::Global().max_parallelism(), kMaxRowParts);
      x_parts_.resize(static_cast<size_t>(m_ * k_) * (pairs_ ? 2 : 4) + 64);
      row_part_sums_.resize(static_cast<size_t>((max_row_parts_ - 1) * m_ * n_) * sizeof(float) + 64);
    }
    return true;
  }

  void Run(const Buf& lhs, const Buf& rhs, Buf& out) override {
    const uint8_t* x = x_.Apply(w_is_lhs_ ? rhs : lhs);
    const Buf& w_buf = w_is_lhs_ ? lhs : rhs;
    const uint8_t* w = w_.Apply(w_buf);
    // A constant's contents never change: any version other than "unknown"
    // (0) names them (the module's own weights, built into it).
    const uint64_t w_version = w_buf.role == Buf::Role::kConstant ? 1 : w_buf.version;
    const uint16_t* w_t = kept_ ? kept_->Get(reinterpret_cast<const uint16_t*>(w), w_version) : nullptr;
    const int64_t x_bytes = hlo::StorageBytes(x_type_), w_bytes = hlo::StorageBytes(w_type_);
    float* xs = pairs_ ? nullptr : reinterpret_cast<float*>(xs_.data());
    for (int64_t b = 0; b < batch_; ++b) {
      const uint8_t* x_b = x + b * m_ * k_ * x_bytes;
      if (!pairs_) LoadToDomain(x_type_, x_b, m_ * k_, xs);
      uint8_t* out_b = out.data + b * m_ * n_ * out.elem_size;
      float* y = acc_.empty() ? reinterpret_cast<float*>(out_b) : reinterpret_cast<float*>(acc_.data());
      // Sums in the output's own order but not its type: stored by the
      // threads that made them, as each finishes its columns.
      uint8_t* store_to = !acc_.empty() && !w_is_lhs_ ? out_b : nullptr;
      const bool stored = w_t != nullptr ? MultiplyTransposed(x_b, w_t, y, store_to)
                                         : Multiply(pairs_ ? static_cast<const void*>(x_b) : xs,
                                                    w + b * n_ * k_ * w_bytes, w_bytes, y, store_to);
      if (acc_.empty()) continue;
      if (!w_is_lhs_) {
        if (!stored) StoreFromDomain(out_type_, y, m_ * n_, out_b);
        continue;
      }
      // The matrix's free dims come first in the output: [n, m], stored in
      // one call (one per column cost gemma's kv einsum a tenth of its time).
      float* t = reinterpret_cast<float*>(transposed_.data());
      for (int64_t j = 0; j < n_; ++j)
        for (int64_t r = 0; r < m_; ++r) t[j * m_ + r] = y[r * n_ + j];
      StoreFromDomain(out_type_, t, m_ * n_, out_b);
    }
  }

 private:
  // y[m, n] = x[m, k] . W for one batch; W is [n / q_][k][q_], x f32 (or
  // bf16 as stored with pairs_). The work is split over the threads so each
  // reads its own stretch of W's memory: whole column ranges (whole blocks
  // of the AMX tiles where they divide among the threads), or, where W is
  // one [k, n] matrix (whose column ranges would share every page), runs of
  // its rows.
  //
  // Where `store_to` is not null and the threads made whole column ranges,
  // each stores its own columns of y there in the output's type (on the
  // core whose cache holds them; for gemma's gate/up product storing all
  // 152,064 sums afterwards on one thread took 45-55 us a call) and this
  // returns true; otherwise y is left for the caller to store.
  bool Multiply(const void* x, const uint8_t* w, int64_t w_bytes, float* y, uint8_t* store_to) {
    const int parts = SplitParts();
    if (tile_blocks_ && parts >= 2 && (n_ / q_) % parts == 0) {
      // Whole blocks a thread (attention heads): each reads its own
      // stretch of W into its own columns of y, with no sums to add after
      // (gemma's q and kv einsum chains 4-7% faster than runs of rows).
      const int64_t per = n_ / q_ / parts;
      ThreadPool::Global().Run(parts, [&](int t) {
        BlocksProduct(x, k_, w, 0, t * per, per, y);
        if (store_to != nullptr) StoreColumns(y, t * per * q_, (t + 1) * per * q_, store_to);
      });
      return store_to != nullptr;
    }
    if ((q_ == n_ || tile_blocks_) && parts >= 2 && k_ >= parts * kRowsPerPart && parts <= max_row_parts_) {
      MultiplyByRows(x, w, y, parts);
      return false;
    }
    auto columns = [&](int64_t g0, int64_t g1) {
      if (q_ == 1) {  // [n, k]: one matrix row per output
        ColumnProduct(x, k_, w + g0 * k_ * w_bytes, g1 - g0, true, k_, y + g0);
        return;
      }
      for (int64_t p = g0 / q_; p * q_ < g1; ++p) {
        const int64_t q0 = std::max(g0, p * q_) - p * q_, q1 = std::min(g1, (p + 1) * q_) - p * q_;
        ColumnProduct(x, k_, w + (p * k_ * q_ + q0) * w_bytes, q1 - q0, false, q_, y + p * q_ + q0);
      }
    };
    if (parts < 2) {
      if (tile_blocks_) RowsProduct(x, k_, w, 0, y);
      else columns(0, n_);
      return false;
    }
    ThreadPool::Global().Run(parts, [&](int t) {
      const auto [g0, g1] = ColumnRange(t, parts);
      columns(g0, g1);
      if (store_to != nullptr) StoreColumns(y, g0, g1, store_to);
    });
    return store_to != nullptr;
  }

  // Multiply's columns split, for the kept transpose `w_t` ([n, k] bf16):
  // each thread its own outputs' rows.
  bool MultiplyTransposed(const void* x, const uint16_t* w_t, float* y, uint8_t* store_to) {
    const int parts = SplitParts();
    ThreadPool::Global().Run(parts, [&](int t) {
      const auto [g0, g1] = ColumnRange(t, parts);
      ColumnProduct(x, k_, reinterpret_cast<const uint8_t*>(w_t + g0 * k_), g1 - g0, true, k_, y + g0);
      if (store_to != nullptr) StoreColumns(y, g0, g1, store_to);
    });
    return store_to != nullptr;
  }

  // Columns [c0, c1) of every row of y (f32 [m, n]) into `out` in the
  // output's type.
  void StoreColumns(const float* y, int64_t c0, int64_t c1, uint8_t* out) const {
    const int64_t elem = hlo::StorageBytes(out_type_);
    for (int64_t r = 0; r < m_; ++r)
      StoreFromDomain(out_type_, y + r * n_ + c0, c1 - c0, out + (r * n_ + c0) * elem);
  }

  // Thread t's columns of y when they are split `parts` ways: ranges of
  // whole vectors, so no two threads write one cache line of y.
  std::pair<int64_t, int64_t> ColumnRange(int t, int parts) const {
    return {n_ * t / parts / 16 * 16, t + 1 == parts ? n_ : n_ * (t + 1) / parts / 16 * 16};
  }

  // Threads a product of this size is split over.
  int SplitParts() const {
    return k_ * n_ >= kSkinnyParallelWeights
               ? static_cast<int>(std::min<int64_t>(KernelParts(), std::max<int64_t>(n_ / 16, 1)))
               : 1;
  }

  // Threads a [k, n] W's rows are split over at most (each adds m x n sums).
  static constexpr int kMaxRowParts = 16;
  // Rows of a [k, n] W a thread takes at a time (an AMX tile's 32).
  static constexpr int64_t kRowsPerPart = 32;

  // y = x . W for W [k, n] (or [n / q][k][q] with tile_blocks_), thread t
  // taking rows [i0, i1) of W (of each block) and the same
  // columns of x (copied out, so its rows are contiguous) into sums of its
  // own; the sums are added up after.
  void MultiplyByRows(const void* x, const uint8_t* w, float* y, int parts) {
    const int64_t x_bytes = pairs_ ? 2 : 4;
    const auto* xb = static_cast<const uint8_t*>(x);
    uint8_t* x_parts = x_parts_.data();
    float* sums = reinterpret_cast<float*>(row_part_sums_.data());
    ThreadPool::Global().Run(parts, [&](int t) {
      const int64_t i0 = k_ * t / parts / kRowsPerPart * kRowsPerPart;
      const int64_t i1 = t + 1 == parts ? k_ : k_ * (t + 1) / parts / kRowsPerPart * kRowsPerPart;
      const int64_t kc = i1 - i0;
      uint8_t* xt = x_parts + m_ * i0 * x_bytes;
      for (int64_t r = 0; r < m_; ++r)
        std::memcpy(xt + r * kc * x_bytes, xb + (r * k_ + i0) * x_bytes, static_cast<size_t>(kc * x_bytes));
      RowsProduct(xt, kc, w, i0, t == 0 ? y : sums + (t - 1) * m_ * n_);
    });
    for (int t = 1; t < parts; ++t) {
      const float* s = sums + (t - 1) * m_ * n_;
      for (int64_t e = 0; e < m_ * n_; ++e) y[e] += s[e];
    }
  }

  // y[m, n] = x[m, kc] . rows [i0, i0 + kc) of W ([k, n], or of every
  // [k, q] block with tile_blocks_); x's rows kc apart.
  void RowsProduct(const void* x, int64_t kc, const uint8_t* w, int64_t i0, float* y) const {
    if (tile_blocks_) BlocksProduct(x, kc, w, i0, 0, n_ / q_, y);
    else ColumnProduct(x, kc, w + i0 * n_ * hlo::StorageBytes(w_type_), n_, false, n_, y);
  }

  // The AMX tiles' share of RowsProduct: blocks [first, first + count) of
  // W's [k, q] blocks, into their columns of y.
  void BlocksProduct(const void* x, int64_t kc, const uint8_t* w, int64_t i0, int64_t first, int64_t count,
                     float* y) const {
    Bf16TileProductBlocks(static_cast<const uint16_t*>(x), m_,
                          reinterpret_cast<const uint16_t*>(w) + first * k_ * q_ + i0 * q_, kc, q_, q_, count,
                          k_ * q_, y + first * q_, n_);
  }

  // One thread's n columns of y (at `yj`, rows n_ apart) = x[m, k] . the
  // same columns of W (at `wj`, rows `ldw` apart).
  void ColumnProduct(const void* x, int64_t k, const uint8_t* wj, int64_t n, bool rows_are_outputs, int64_t ldw,
                     float* yj) const {
    if (pairs_) {
      Bf16PairProduct(static_cast<const uint16_t*>(x), m_, reinterpret_cast<const uint16_t*>(wj), k, n,
                      rows_are_outputs, ldw, yj, n_);
    } else {
      SkinnyProduct(static_cast<const float*>(x), m_, wj, w_type_, k, n, rows_are_outputs, ldw, yj, n_, 1);
    }
  }

  bool w_is_lhs_ = false;
  bool pairs_ = false;  // bf16 x and W through Bf16PairProduct
  // W is [n / q][k][q] blocks the AMX tiles take together, each thread its
  // runs of rows of every block (and so a stream from each).
  bool tile_blocks_ = false;
  ET x_type_ = ET::kInvalid, w_type_ = ET::kInvalid, out_type_ = ET::kInvalid;
  int64_t batch_ = 1, m_ = 1, n_ = 1, k_ = 1, q_ = 1;
  int max_row_parts_ = 1;  // threads MultiplyByRows has sums for
  Permutation x_, w_;
  LazyScratch xs_, acc_, transposed_, x_parts_, row_part_sums_;
  std::unique_ptr<KeptTranspose> kept_;  // where W is [k, n] (or [k, q] blocks)
};

}  // namespace

std::unique_ptr<DotKernel> PlanSkinnyDot(const hlo::Shape& lhs, const hlo::Shape& rhs, const hlo::DotDims& dims,
                                         const hlo::Shape& out) {
  if (!IsF32Domain(lhs.type) || !IsF32Domain(rhs.type) || !IsF32Domain(out.type)) return nullptr;
  if (!dims.lhs_ragged.empty() || !dims.rhs_group.empty()) return nullptr;
  // Where the CPU has a low-precision matmul (AVX512_BF16, AMX), oneDNN
  // runs these operands as stored instead; except bf16 against bf16 where
  // the pair products read the matrix where it lies (oneDNN reorders it
  // every call, and a few rows do not pay that back: gemma3 1B's 11-token
  // call read its weights at 19 GB/s).
  if (lhs.type == rhs.type && (out.type == ET::kF32 || out.type == lhs.type) && LowPrecisionGemmAvailable(lhs.type) &&
      !TakesBf16Pairs(lhs.type, rhs.type))
    return nullptr;
  if (IsByteFloat(lhs.type) && IsByteFloat(rhs.type) && LowPrecisionGemmAvailable(ET::kBF16)) return nullptr;
  auto rows = [&](const hlo::Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
    return Product(s.dims, DotFreeDims(s.rank(), batch, contracting));
  };
  const int64_t lhs_rows = rows(lhs, dims.lhs_batch, dims.lhs_contracting);
  const int64_t rhs_rows = rows(rhs, dims.rhs_batch, dims.rhs_contracting);
  const bool rhs_is_w = IsSkinnyWeightType(rhs.type) && lhs_rows <= kSkinnyRows;
  const bool lhs_is_w = IsSkinnyWeightType(lhs.type) && rhs_rows <= kSkinnyRows;
  if (rhs_is_w || lhs_is_w) {
    // Both qualify (two small operands): the larger is the matrix.
    const bool w_is_lhs = lhs_is_w && (!rhs_is_w || lhs_rows > rhs_rows);
    auto k = std::make_unique<SkinnyDot>();
    if (!k->Init(lhs, rhs, dims, out, w_is_lhs, /*in_place_only=*/false)) return nullptr;
    return k;
  }
  // An f32 matrix the general dot reads in place ([k, n] or [n, k]) stays
  // there, at the memory's speed; one it would permute every call (gemma's
  // q, k and v einsums: [heads, d_model, head_dim]) is read in place here.
  auto general_reads_in_place = [](const hlo::Shape& s, const std::vector<int64_t>& batch,
                                   const std::vector<int64_t>& contracting) {
    const DotOperandOrders o = DotOperandOrdersOf(s.rank(), batch, contracting);
    return IsIdentityPermutation(o.contracting_first) || IsIdentityPermutation(o.free_first);
  };
  const bool rhs_is_f32_w = rhs.type == ET::kF32 && lhs_rows <= kSkinnyRows &&
                            !general_reads_in_place(rhs, dims.rhs_batch, dims.rhs_contracting);
  const bool lhs_is_f32_w = lhs.type == ET::kF32 && rhs_rows <= kSkinnyRows && !rhs_is_f32_w &&
                            !general_reads_in_place(lhs, dims.lhs_batch, dims.lhs_contracting);
  if (!rhs_is_f32_w && !lhs_is_f32_w) return nullptr;
  auto k = std::make_unique<SkinnyDot>();
  if (!k->Init(lhs, rhs, dims, out, lhs_is_f32_w, /*in_place_only=*/true)) return nullptr;
  return k;
}

}  // namespace neuron::kernels
