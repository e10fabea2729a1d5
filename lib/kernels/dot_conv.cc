#include "lib/kernels/dot_conv.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "lib/kernels/complex_conv.h"
#include "lib/kernels/data_movement.h"
#include "lib/kernels/depthwise_conv.h"
#include "lib/kernels/dnnl_convolution.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/gemm.h"
#include "lib/kernels/lazy_scratch.h"
#include "lib/kernels/low_precision_gemm.h"
#include "lib/kernels/skinny_dot.h"
#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

std::vector<int64_t> Permuted(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> r;
  for (int64_t p : perm) r.push_back(dims[p]);
  return r;
}

// An operand brought into the compute domain with a given dim order,
// using the caller's memory directly when nothing needs to change.
class OperandPrep {
 public:
  void Init(const hlo::Shape& s, std::vector<int64_t> perm, Domain dom) {
    type_ = s.type;
    dom_ = dom;
    perm_ = std::move(perm);
    identity_ = IsIdentityPermutation(perm_);
    in_place_ = identity_ && DomainOf(type_) == dom &&
                (type_ == ET::kF32 || type_ == ET::kF64 || type_ == ET::kS64 || type_ == ET::kU64);
    permuted_ = Buf::Of(type_, Permuted(s.dims, perm_));
    if (!identity_) perm_bytes_.resize(permuted_.bytes + 1);
    if (!in_place_) domain_.resize(permuted_.count * DomainBytes(dom) + 16);
  }
  const void* Prepare(const Buf& in) {
    if (in_place_) return in.data;
    return Widen(Permute(in));
  }
  // The operand in its dim order but still in its storage type.
  const uint8_t* Permute(const Buf& in) {
    if (identity_) return in.data;
    permuted_.data = perm_bytes_.data();
    Transpose(in, perm_, permuted_);
    return permuted_.data;
  }
  // Permute()'s result as bf16 (IsByteFloat types), for the bf16 matmul.
  const uint16_t* ToBf16(const uint8_t* permuted) {
    const int64_t n = permuted_.count;
    uint16_t* dst = reinterpret_cast<uint16_t*>(bf16_.data());
    const int parts = KernelParts();
    if (n < (int64_t{1} << 18) || parts < 2) {
      ByteFloatToBf16(type_, permuted, n, dst);
      return dst;
    }
    ThreadPool::Global().Run(parts, [&](int p) {
      int64_t i0 = n * p / parts / 64 * 64, i1 = p + 1 == parts ? n : n * (p + 1) / parts / 64 * 64;
      ByteFloatToBf16(type_, permuted + i0, i1 - i0, dst + i0);
    });
    return dst;
  }
  // Sizes the bf16 copy ToBf16 needs.
  void NeedBf16() { bf16_.resize(permuted_.count * 2 + 16); }
  // Nor permuted: it is read where it lies.
  void Unused() {
    perm_bytes_.resize(0);
    domain_.resize(0);
    bf16_.resize(0);
  }

  // Permute()'s result in the compute domain. Big operands (bf16 weights
  // on the fallback path) are split over the GEMM's threads: a single
  // thread converted them at a third of the memory bandwidth.
  const void* Widen(const uint8_t* permuted) {
    const int64_t n = permuted_.count;
    uint8_t* dst = domain_.data();  // taken here: the first call allocates
    const int parts = KernelParts();
    if (n < (int64_t{1} << 18) || parts < 2) {
      LoadToDomain(type_, permuted, n, dst);
      return dst;
    }
    const int64_t in_bytes = permuted_.elem_size, out_bytes = DomainBytes(dom_);
    ThreadPool::Global().Run(parts, [&](int p) {
      int64_t i0 = n * p / parts / 64 * 64, i1 = p + 1 == parts ? n : n * (p + 1) / parts / 64 * 64;
      LoadToDomain(type_, permuted + i0 * in_bytes, i1 - i0, dst + i0 * out_bytes);
    });
    return dst;
  }

 private:
  ET type_ = ET::kInvalid;
  Domain dom_ = Domain::kF32;
  std::vector<int64_t> perm_;
  bool identity_ = true, in_place_ = false;
  Buf permuted_;
  LazyScratch perm_bytes_;
  LazyScratch domain_;
  LazyScratch bf16_;
};

Domain ComputeDomain(ET a, ET b, ET out) {
  if (hlo::IsComplex(a) || hlo::IsComplex(b) || hlo::IsComplex(out))
    return (a == ET::kC128 || b == ET::kC128 || out == ET::kC128) ? Domain::kC128 : Domain::kC64;
  if (a == ET::kF64 || b == ET::kF64 || out == ET::kF64) return Domain::kF64;
  if (DomainOf(a) == Domain::kI64 && DomainOf(b) == Domain::kI64) return Domain::kI64;
  if (DomainOf(a) == Domain::kI64 || DomainOf(b) == Domain::kI64) return Domain::kF64;
  return Domain::kF32;
}

// Batched C[b] = A[b] (m x k) * B[b] (k x n) in a domain; A/B may be
// stored transposed.
void BatchedGemm(Domain dom, int64_t batch, int64_t m, int64_t n, int64_t k, bool ta,
                 const void* a, bool tb, const void* b, void* c) {
  for (int64_t i = 0; i < batch; ++i) {
    if (dom == Domain::kF32) {
      const float* A = static_cast<const float*>(a) + i * m * k;
      const float* B = static_cast<const float*>(b) + i * k * n;
      Sgemm(ta, tb, m, n, k, A, ta ? m : k, B, tb ? k : n, static_cast<float*>(c) + i * m * n, n);
    } else if (dom == Domain::kF64) {
      const double* A = static_cast<const double*>(a) + i * m * k;
      const double* B = static_cast<const double*>(b) + i * k * n;
      Dgemm(ta, tb, m, n, k, A, ta ? m : k, B, tb ? k : n, static_cast<double*>(c) + i * m * n, n);
    } else if (IsComplexDomain(dom)) {
      // Complex products: a plain loop in complex<double>.
      auto at = [&](const void* p, int64_t idx) -> std::complex<double> {
        if (dom == Domain::kC64) { auto v = static_cast<const std::complex<float>*>(p)[idx]; return {v.real(), v.imag()}; }
        return static_cast<const std::complex<double>*>(p)[idx];
      };
      for (int64_t x = 0; x < m; ++x)
        for (int64_t y = 0; y < n; ++y) {
          std::complex<double> acc = 0;
          for (int64_t z = 0; z < k; ++z)
            acc += at(a, i * m * k + (ta ? z * m + x : x * k + z)) * at(b, i * k * n + (tb ? y * k + z : z * n + y));
          int64_t o = i * m * n + x * n + y;
          if (dom == Domain::kC64) static_cast<std::complex<float>*>(c)[o] = {static_cast<float>(acc.real()), static_cast<float>(acc.imag())};
          else static_cast<std::complex<double>*>(c)[o] = acc;
        }
    } else {
      const int64_t* A = static_cast<const int64_t*>(a) + i * m * k;
      const int64_t* B = static_cast<const int64_t*>(b) + i * k * n;
      int64_t* C = static_cast<int64_t*>(c) + i * m * n;
      for (int64_t x = 0; x < m; ++x)
        for (int64_t y = 0; y < n; ++y) {
          uint64_t acc = 0;
          for (int64_t z = 0; z < k; ++z) {
            int64_t av = ta ? A[z * m + x] : A[x * k + z];
            int64_t bv = tb ? B[y * k + z] : B[z * n + y];
            acc += static_cast<uint64_t>(av) * static_cast<uint64_t>(bv);
          }
          C[x * n + y] = static_cast<int64_t>(acc);
        }
    }
  }
}

// Integer inputs loaded as int64 but computed in f64 (mixed dots).
void ToF64InPlace(ET type, void* data, int64_t n) {
  if (DomainOf(type) != Domain::kI64) return;
  int64_t* p = static_cast<int64_t*>(data);
  double* d = static_cast<double*>(data);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<double>(p[i]);
}

void StoreResult(Domain dom, const void* c, Buf& out) {
  if (DomainOf(out.type) == dom) {
    StoreFromDomain(out.type, c, out.count, out.data);
    return;
  }
  for (int64_t i = 0; i < out.count; ++i) {
    double v = dom == Domain::kF32 ? static_cast<const float*>(c)[i]
               : dom == Domain::kF64 ? static_cast<const double*>(c)[i]
                                     : static_cast<double>(static_cast<const int64_t*>(c)[i]);
    if (DomainOf(out.type) == Domain::kI64 && dom == Domain::kI64)
      StoreInt(out.type, out.data, i, static_cast<const int64_t*>(c)[i]);
    else
      StoreDouble(out.type, out.data, i, v);
  }
}

class GeneralDot : public DotKernel {
 public:
  absl::Status Init(const hlo::Shape& lhs, const hlo::Shape& rhs, const hlo::DotDims& d,
                    const hlo::Shape& out) {
    dom_ = ComputeDomain(lhs.type, rhs.type, out.type);
    if (IsComplexDomain(dom_) && (DomainOf(lhs.type) != dom_ || DomainOf(rhs.type) != dom_ || DomainOf(out.type) != dom_))
      return absl::UnimplementedError("dot mixing complex and real operands");
    lhs_type_ = lhs.type;
    rhs_type_ = rhs.type;
    const std::vector<int64_t> lf = DotFreeDims(lhs.rank(), d.lhs_batch, d.lhs_contracting);
    const std::vector<int64_t> rf = DotFreeDims(rhs.rank(), d.rhs_batch, d.rhs_contracting);
    batch_ = 1;
    for (int64_t b : d.lhs_batch) batch_ *= lhs.dims[b];
    m_ = 1;
    for (int64_t f : lf) m_ *= lhs.dims[f];
    n_ = 1;
    for (int64_t f : rf) n_ *= rhs.dims[f];
    k_ = 1;
    for (int64_t c : d.lhs_contracting) k_ *= lhs.dims[c];
    // lhs as [B, M, K] or, when cheaper, [B, K, M] (transposed GEMM).
    const DotOperandOrders lo = DotOperandOrdersOf(lhs.rank(), d.lhs_batch, d.lhs_contracting);
    ta_ = !IsIdentityPermutation(lo.free_first) && IsIdentityPermutation(lo.contracting_first);
    lhs_.Init(lhs, ta_ ? lo.contracting_first : lo.free_first, dom_);
    // rhs as [B, K, N] or [B, N, K].
    const DotOperandOrders ro = DotOperandOrdersOf(rhs.rank(), d.rhs_batch, d.rhs_contracting);
    tb_ = !IsIdentityPermutation(ro.contracting_first) && IsIdentityPermutation(ro.free_first);
    rhs_.Init(rhs, tb_ ? ro.free_first : ro.contracting_first, dom_);
    out_in_place_ = DomainOf(out.type) == dom_ &&
                    (out.type == ET::kF32 || out.type == ET::kF64 || out.type == ET::kS64 || out.type == ET::kU64);
    if (!out_in_place_) result_.resize(batch_ * m_ * n_ * DomainBytes(dom_) + 16);
    // bf16 x bf16 (f16 x f16) with an f32 or same-type result: oneDNN's
    // low-precision matmul reads the operands as stored, where the CPU has
    // the instructions (the widening below stays as its fallback).
    low_precision_ = lhs.type == rhs.type && (out.type == ET::kF32 || out.type == lhs.type) &&
                     LowPrecisionGemmAvailable(lhs.type);
    // f8 (f6, f4) operands: exact in bf16, so widened to bf16 (half the
    // bytes of f32) for the same matmul, with an f32 (or bf16) result.
    byte_floats_ = IsByteFloat(lhs.type) && IsByteFloat(rhs.type) &&
                   DomainOf(out.type) == Domain::kF32 && LowPrecisionGemmAvailable(ET::kBF16);
    if (byte_floats_) {
      lhs_.NeedBf16();
      rhs_.NeedBf16();
    }
    out_type_ = out.type;
    return absl::OkStatus();
  }

  void Run(const Buf& lhs, const Buf& rhs, Buf& out) override {
    if (byte_floats_) {
      const uint8_t* a = lhs_.Permute(lhs);
      const uint8_t* b = rhs_.Permute(rhs);
      const ET result = out_type_ == ET::kBF16 ? ET::kBF16 : ET::kF32;
      void* c = result == out_type_ ? static_cast<void*>(out.data) : result_.data();
      if (LowPrecisionGemm(ET::kBF16, result, batch_, m_, n_, k_, ta_, lhs_.ToBf16(a), tb_,
                           rhs_.ToBf16(b), c)) {
        if (c != out.data) StoreResult(dom_, c, out);
        return;
      }
      BatchedGemm(dom_, batch_, m_, n_, k_, ta_, lhs_.Widen(a), tb_, rhs_.Widen(b), Result(out));
      if (!out_in_place_) StoreResult(dom_, result_.data(), out);
      return;
    }
    if (low_precision_) {
      const uint8_t* a = lhs_.Permute(lhs);
      const uint8_t* b = rhs_.Permute(rhs);
      if (LowPrecisionGemm(lhs_type_, out_type_, batch_, m_, n_, k_, ta_, a, tb_, b, out.data))
        return;

      BatchedGemm(dom_, batch_, m_, n_, k_, ta_, lhs_.Widen(a), tb_, rhs_.Widen(b), Result(out));
      if (!out_in_place_) StoreResult(dom_, result_.data(), out);
      return;
    }
    const void* a = lhs_.Prepare(lhs);
    const void* b = rhs_.Prepare(rhs);
    if (dom_ == Domain::kF64) {
      // Mixed int/float dots: widen integer operands.
      if (DomainOf(lhs_type_) == Domain::kI64) { ToF64InPlace(lhs_type_, const_cast<void*>(a), lhs.count); }
      if (DomainOf(rhs_type_) == Domain::kI64) { ToF64InPlace(rhs_type_, const_cast<void*>(b), rhs.count); }
    }
    void* c = Result(out);
    BatchedGemm(dom_, batch_, m_, n_, k_, ta_, a, tb_, b, c);
    if (!out_in_place_) StoreResult(dom_, c, out);
  }

 private:
  // Where the product in the compute domain goes.
  void* Result(Buf& out) { return out_in_place_ ? static_cast<void*>(out.data) : result_.data(); }


  Domain dom_ = Domain::kF32;
  ET lhs_type_ = ET::kInvalid, rhs_type_ = ET::kInvalid, out_type_ = ET::kInvalid;
  int64_t batch_ = 1, m_ = 1, n_ = 1, k_ = 1;
  bool ta_ = false, tb_ = false, out_in_place_ = false, low_precision_ = false;
  bool byte_floats_ = false;
  OperandPrep lhs_, rhs_;
  LazyScratch result_;
};

// Convolution as GEMMs: canonical input [N, C, S...], kernel [O, I, K...],
// output [N, O, S'...], per group. Dense windows go through im2col, one
// product per image. Windows that mostly fall in padding or dilation holes
// (gradient convolutions: pad k-1 on each side, lhs dilation) would make
// im2col multiply mostly zeros, so they go tap by tap instead: for each
// kernel position, the input pixels it really meets are gathered for a
// batch of images, multiplied once, and added into the outputs they feed.
class ConvKernel : public DotKernel {
 public:
  absl::Status Init(const hlo::Shape& in, const hlo::Shape& ker, const hlo::Shape& out,
                    const hlo::Attributes& attrs) {
    const hlo::ConvDims& d = *attrs.conv;
    dom_ = ComputeDomain(in.type, ker.type, out.type);
    if (IsComplexDomain(dom_)) return absl::UnimplementedError("complex convolution");
    if (dom_ == Domain::kI64) dom_ = Domain::kF64;
    in_type_ = in.type;
    ker_type_ = ker.type;
    nsp_ = static_cast<int64_t>(d.input_spatial.size());
    in_perm_ = {d.input_batch, d.input_feature};
    in_perm_.insert(in_perm_.end(), d.input_spatial.begin(), d.input_spatial.end());
    ker_perm_ = {d.kernel_output_feature, d.kernel_input_feature};
    ker_perm_.insert(ker_perm_.end(), d.kernel_spatial.begin(), d.kernel_spatial.end());
    // Output canonical [N, O, S'...] -> actual layout: out dim i takes
    // canonical dim inv[i].
    std::vector<int64_t> canon_of_out(out.rank());
    canon_of_out[d.output_batch] = 0;
    canon_of_out[d.output_feature] = 1;
    for (int64_t s = 0; s < nsp_; ++s) canon_of_out[d.output_spatial[s]] = 2 + s;
    out_perm_ = canon_of_out;
    out_type_ = out.type;
    n_ = in.dims[d.input_batch];
    c_ = in.dims[d.input_feature];
    o_ = ker.dims[d.kernel_output_feature];
    ci_ = ker.dims[d.kernel_input_feature];
    on_ = out.dims[d.output_batch];
    for (int64_t s = 0; s < nsp_; ++s) {
      in_sp_.push_back(in.dims[d.input_spatial[s]]);
      k_sp_.push_back(ker.dims[d.kernel_spatial[s]]);
      out_sp_.push_back(out.dims[d.output_spatial[s]]);
      const hlo::WindowDim w = s < static_cast<int64_t>(attrs.window.size())
                                   ? attrs.window[s] : hlo::WindowDim{};
      win_.push_back(w);
    }
    fgc_ = attrs.feature_group_count;
    bgc_ = attrs.batch_group_count;
    if (PlanWholeWindow(in, ker, out, d)) return absl::OkStatus();
    if (PlanPointwise(in, ker, out, d)) return absl::OkStatus();
    if (PlanDirect(in, ker, out, d)) {
      // Kept for PlanCanonical, should oneDNN ever fail at run time.
      in_shape_ = in;
      ker_shape_ = ker;
      out_shape_ = out;
      return absl::OkStatus();
    }
    if (PlanPlanes(in, ker, out, d)) return absl::OkStatus();
    PlanCanonical(in, ker, out);
    return absl::OkStatus();
  }

  // Depthwise convolutions oneDNN's forward primitive cannot take (the
  // lhs-dilated input gradients, and the batch-grouped weight gradients):
  // plane by plane, where the operands lie (depthwise_conv.h).
  bool PlanPlanes(const hlo::Shape& in, const hlo::Shape& ker, const hlo::Shape& out, const hlo::ConvDims& d) {
    if (nsp_ != 2 || in.type != ET::kF32 || ker.type != ET::kF32 || out.type != ET::kF32 ||
        o_ != fgc_ * bgc_)
      return false;
    const std::vector<int64_t> xs = RowMajorStrides(in.dims), ws = RowMajorStrides(ker.dims),
                               ys = RowMajorStrides(out.dims);
    PlaneConvShape s;
    s.out_batch = on_;
    s.out_features = o_;
    s.w_o = ws[d.kernel_output_feature];
    s.x_n = xs[d.input_batch];
    if (fgc_ > 1 && fgc_ == c_ && ci_ == 1 && bgc_ == 1) {
      // Output feature o reads input feature o.
      s.x_o = xs[d.input_feature];
    } else if (bgc_ > 1 && fgc_ == 1 && ci_ == c_) {
      // Output feature o sums over every feature of image group o.
      s.reduce = c_;
      s.x_o = on_ * xs[d.input_batch];
      s.x_r = xs[d.input_feature];
      s.w_r = ws[d.kernel_input_feature];
    } else {
      return false;
    }
    s.y_n = ys[d.output_batch];
    s.y_o = ys[d.output_feature];
    s.in_h = in_sp_[0];
    s.in_w = in_sp_[1];
    s.k_h = k_sp_[0];
    s.k_w = k_sp_[1];
    s.out_h = out_sp_[0];
    s.out_w = out_sp_[1];
    s.x_row = xs[d.input_spatial[0]];
    s.x_col = xs[d.input_spatial[1]];
    s.w_row = ws[d.kernel_spatial[0]];
    s.w_col = ws[d.kernel_spatial[1]];
    s.y_row = ys[d.output_spatial[0]];
    s.y_col = ys[d.output_spatial[1]];
    s.win_h = win_[0];
    s.win_w = win_[1];
    planes_ = PlaneConvolution::Plan(s);
    return planes_ != nullptr;
  }

  // The operands permuted to [N, C, S...] and [O, C/G, K...] and the
  // result computed as [N, O, S'...], then laid out as the output: for
  // the types and windows oneDNN cannot take where they lie.
  void PlanCanonical(const hlo::Shape& in, const hlo::Shape& ker, const hlo::Shape& out) {
    in_.Init(in, in_perm_, dom_);
    ker_.Init(ker, ker_perm_, dom_);
    ks_ = 1;
    for (int64_t k : k_sp_) ks_ *= k;
    os_ = 1;
    for (int64_t o : out_sp_) os_ *= o;
    is_ = 1;
    for (int64_t i : in_sp_) is_ *= i;
    canon_out_.resize(static_cast<size_t>(on_ * o_ * os_) * DomainBytes(dom_) + 8);
    canon_dims_ = {on_, o_};
    canon_dims_.insert(canon_dims_.end(), out_sp_.begin(), out_sp_.end());
    canon_store_.resize(static_cast<size_t>(on_ * o_ * os_) * hlo::StorageBytes(out.type) + 8);
    PlanWindows();
    // bf16 (and f8) images and kernels: im2col and the taps gather the
    // 16-bit values as stored and the products run on oneDNN's bf16
    // matmul with f32 results, where the CPU has the instructions.
    auto bf16_operand = [](ET t) { return t == ET::kBF16 || IsByteFloat(t); };
    bf16_ = dom_ == Domain::kF32 && bf16_operand(in.type) && bf16_operand(ker.type) &&
            LowPrecisionGemmAvailable(ET::kBF16);
    if (bf16_) {
      if (in.type != ET::kBF16) in_.NeedBf16();
      if (ker.type != ET::kBF16) ker_.NeedBf16();
    }
    if (dom_ == Domain::kF32) PlanDnnl();
  }

  // oneDNN on the operands and result where they lie, in whatever dim
  // order: f32, or bf16 where the CPU has the instructions. Nothing is
  // permuted, widened or copied around it (a resnet's NHWC convolutions
  // spent four fifths of their time in those copies).
  bool PlanDirect(const hlo::Shape& in, const hlo::Shape& ker, const hlo::Shape& out, const hlo::ConvDims& d) {
    if (dom_ != Domain::kF32 || in.type != ker.type || bgc_ != 1) return false;
    const bool bf16 = in.type == ET::kBF16 && LowPrecisionGemmAvailable(ET::kBF16);
    if (in.type != ET::kF32 && !bf16) return false;
    if (out.type != ET::kF32 && out.type != in.type) return false;
    DnnlConvShape shape{in.type, out.type, n_, c_, o_, fgc_, in_sp_, k_sp_, out_sp_, {}, {}, {}, {}};
    if (!WindowForDnnl(&shape)) return false;
    const std::vector<int64_t> xs = RowMajorStrides(in.dims), ws = RowMajorStrides(ker.dims),
                               ys = RowMajorStrides(out.dims);
    shape.x_strides = {xs[d.input_batch], xs[d.input_feature]};
    shape.w_strides = {ws[d.kernel_output_feature], ws[d.kernel_input_feature]};
    shape.y_strides = {ys[d.output_batch], ys[d.output_feature]};
    for (int64_t s = 0; s < nsp_; ++s) {
      shape.x_strides.push_back(xs[d.input_spatial[s]]);
      shape.w_strides.push_back(ws[d.kernel_spatial[s]]);
      shape.y_strides.push_back(ys[d.output_spatial[s]]);
    }
    dnnl_ = DnnlConvolution::Create(shape);
    direct_ = dnnl_ != nullptr;
    return direct_;
  }

  // A window as large as the input, f32 throughout (a weight gradient:
  // a 1x1 convolution's is a 112x112 window over the activations): each
  // output is a dot product over features and pixels, so the result is a
  // sum over input features of [N, S] x [O, S]^T products read where the
  // operands lie, with no im2col, reorder or canonical copy.
  bool PlanWholeWindow(const hlo::Shape& in, const hlo::Shape& ker, const hlo::Shape& out,
                       const hlo::ConvDims& d) {
    if (in.type != ET::kF32 || ker.type != ET::kF32 || out.type != ET::kF32 || fgc_ != 1 || bgc_ != 1 ||
        nsp_ == 0)
      return false;
    const int64_t rank = nsp_ + 2;
    for (int64_t s = 0; s < nsp_; ++s) {
      const hlo::WindowDim& w = win_[s];
      if (k_sp_[s] != in_sp_[s] || out_sp_[s] != 1 || w.pad_low != 0 || w.pad_high != 0 ||
          w.window_dilation != 1 || w.base_dilation != 1 || w.reversal)
        return false;
      // Pixels innermost and in order in both operands.
      if (d.input_spatial[s] != 2 + s || d.kernel_spatial[s] != 2 + s) return false;
    }
    if (in.rank() != rank || ker.rank() != rank) return false;
    s_ = 1;
    for (int64_t v : in_sp_) s_ *= v;
    // Row strides of one input feature's [N, S] and [O, S] blocks, and the
    // step from one input feature to the next.
    in_batch_stride_ = d.input_batch == 0 ? c_ * s_ : s_;
    in_feature_stride_ = d.input_feature == 0 ? n_ * s_ : s_;
    ker_out_stride_ = d.kernel_output_feature == 0 ? ci_ * s_ : s_;
    ker_in_stride_ = d.kernel_input_feature == 0 ? o_ * s_ : s_;
    out_batch_first_ = d.output_batch < d.output_feature;
    whole_window_ = true;
    in_.Unused();
    ker_.Unused();
    if (in_feature_stride_ != s_ || ker_in_stride_ != s_) partial_.resize(static_cast<size_t>(n_ * o_) * 4);
    if (!out_batch_first_) product_.resize(static_cast<size_t>(n_ * o_) * 4);
    return true;
  }

  // A 1x1 window, stride 1, no padding, over images whose pixels are
  // contiguous per feature (NCHW, CNHW): each image's result is one
  // product W[O, C] x X[C, S], read and written where the operands lie.
  // oneDNN would reorder NCHW activations to its blocked layout and back
  // (a MobileNet's 1x1 layers kept a gigabyte of such copies).
  bool PlanPointwise(const hlo::Shape& in, const hlo::Shape& ker, const hlo::Shape& out, const hlo::ConvDims& d) {
    if (in.type != ET::kF32 || ker.type != ET::kF32 || out.type != ET::kF32 || fgc_ != 1 || bgc_ != 1 ||
        nsp_ == 0 || on_ != n_)
      return false;
    for (int64_t s = 0; s < nsp_; ++s) {
      const hlo::WindowDim& w = win_[s];
      if (k_sp_[s] != 1 || out_sp_[s] != in_sp_[s] || w.stride != 1 || w.pad_low != 0 || w.pad_high != 0 ||
          w.window_dilation != 1 || w.base_dilation != 1)
        return false;
      // Pixels trailing and in order in the image and the result.
      if (d.input_spatial[s] != 2 + s || d.output_spatial[s] != 2 + s) return false;
    }
    const std::vector<int64_t> xs = RowMajorStrides(in.dims), ws = RowMajorStrides(ker.dims),
                               ys = RowMajorStrides(out.dims);
    s_ = 1;
    for (int64_t v : in_sp_) s_ *= v;
    pw_x_batch_ = xs[d.input_batch];
    pw_x_feature_ = xs[d.input_feature];
    pw_y_batch_ = ys[d.output_batch];
    pw_y_feature_ = ys[d.output_feature];
    // W[o, c]: rows o when input features are contiguous, else transposed.
    const int64_t w_o = ws[d.kernel_output_feature], w_c = ws[d.kernel_input_feature];
    if (w_c == 1 || c_ == 1) {
      pw_w_trans_ = false;
      pw_w_ld_ = std::max<int64_t>(w_o, c_);
    } else if (w_o == 1 || o_ == 1) {
      pw_w_trans_ = true;
      pw_w_ld_ = std::max<int64_t>(w_c, o_);
    } else {
      return false;
    }
    pointwise_ = true;
    return true;
  }

  void RunPointwise(const float* x, const float* w, float* y) {
    for (int64_t n = 0; n < n_; ++n)
      Sgemm(pw_w_trans_, false, o_, s_, c_, w, pw_w_ld_, x + n * pw_x_batch_, pw_x_feature_,
            y + n * pw_y_batch_, pw_y_feature_);
  }

  void RunWholeWindow(const float* x, const float* w, float* y) {
    // Features innermost in both (each row holds all features' pixels):
    // one product over features and pixels together.
    float* c = out_batch_first_ ? y : reinterpret_cast<float*>(product_.data());
    if (in_feature_stride_ == s_ && ker_in_stride_ == s_) {
      Sgemm(false, true, n_, o_, c_ * s_, x, in_batch_stride_, w, ker_out_stride_, c, o_);
    } else {
      float* part = reinterpret_cast<float*>(partial_.data());
      for (int64_t i = 0; i < c_; ++i) {
        Sgemm(false, true, n_, o_, s_, x + i * in_feature_stride_, in_batch_stride_, w + i * ker_in_stride_,
              ker_out_stride_, i == 0 ? c : part, o_);
        if (i > 0)
          for (int64_t k = 0; k < n_ * o_; ++k) c[k] += part[k];
      }
    }
    if (!out_batch_first_)
      for (int64_t b = 0; b < n_; ++b)
        for (int64_t o = 0; o < o_; ++o) y[o * n_ + b] = c[b * o_ + o];
  }

  // oneDNN's convolution primitive, for the windows it has: no input
  // dilation, batch groups or reversal, no negative padding.
  void PlanDnnl() {
    // The result goes straight into the output when that is laid out
    // canonically and oneDNN can write its type; else as f32 into
    // canon_out_ for StoreCanonical.
    direct_out_ = IsIdentityPermutation(out_perm_) && (out_type_ == ET::kF32 || (bf16_ && out_type_ == ET::kBF16));
    const ET result = direct_out_ ? out_type_ : ET::kF32;
    DnnlConvShape shape{bf16_ ? ET::kBF16 : ET::kF32, result, n_, c_, o_, fgc_, in_sp_, k_sp_, out_sp_, {}, {}, {}, {}};
    if (bgc_ != 1 || !WindowForDnnl(&shape)) return;
    dnnl_ = DnnlConvolution::Create(shape);
  }

  // The window in oneDNN's terms; false for what it has no primitive for
  // (input dilation, reversal).
  bool WindowForDnnl(DnnlConvShape* shape) const {
    for (const hlo::WindowDim& w : win_) {
      if (w.base_dilation != 1 || w.reversal) return false;
      shape->strides.push_back(w.stride);
      shape->pad_low.push_back(w.pad_low);
      shape->pad_high.push_back(w.pad_high);
      shape->dilations.push_back(w.window_dilation);
    }
    return true;
  }

  // Offset within one input channel of the pixel that kernel position kk
  // meets at output position oo, or -1 where it meets padding or a hole.
  int64_t InputOffset(int64_t kk, int64_t oo) const {
    int64_t off = 0;
    for (int64_t s = 0; s < nsp_; ++s) {
      int64_t stride_k = 1, stride_o = 1;
      for (int64_t t = s + 1; t < nsp_; ++t) { stride_k *= k_sp_[t]; stride_o *= out_sp_[t]; }
      const int64_t kpos = (kk / stride_k) % k_sp_[s], opos = (oo / stride_o) % out_sp_[s];
      const hlo::WindowDim& w = win_[s];
      const int64_t kp = w.reversal ? k_sp_[s] - 1 - kpos : kpos;
      int64_t p = opos * w.stride - w.pad_low + kp * w.window_dilation;
      if (p < 0 || p % w.base_dilation != 0) return -1;
      p /= w.base_dilation;
      if (p >= in_sp_[s]) return -1;
      off = off * in_sp_[s] + p;
    }
    return off;
  }

  // Every kernel position's input offsets, computed once. Where the pixels
  // really met are at most half of the im2col matrix (and few enough to
  // list), they become per-tap lists and the convolution runs tap by tap;
  // otherwise the table feeds im2col (it is col_'s size over ci).
  void PlanWindows() {
    offsets_.resize(ks_ * os_);
    int64_t met = 0;
    for (int64_t kk = 0; kk < ks_; ++kk)
      for (int64_t oo = 0; oo < os_; ++oo) met += (offsets_[kk * os_ + oo] = InputOffset(kk, oo)) >= 0;
    constexpr int64_t kMaxPairs = int64_t{1} << 24;
    if (ks_ < 2 || 2 * met > ks_ * os_ || met > kMaxPairs) {
      col_.resize(static_cast<size_t>(ci_ * ks_ * os_) * DomainBytes(dom_) + 8);
      return;
    }
    tap_start_.assign(ks_ + 1, 0);
    int64_t most = 1;
    for (int64_t kk = 0; kk < ks_; ++kk) {
      for (int64_t oo = 0; oo < os_; ++oo) {
        const int64_t off = offsets_[kk * os_ + oo];
        if (off < 0) continue;
        tap_oo_.push_back(oo);
        tap_off_.push_back(off);
      }
      tap_start_[kk + 1] = static_cast<int64_t>(tap_oo_.size());
      most = std::max(most, tap_start_[kk + 1] - tap_start_[kk]);
    }
    std::vector<int64_t>().swap(offsets_);
    // Images per product: the gathered block stays around 16 MiB.
    constexpr int64_t kBlockElems = int64_t{4} << 20;
    tap_batch_ = std::clamp<int64_t>(kBlockElems / std::max<int64_t>(1, ci_ * most), 1, std::max<int64_t>(1, on_));
    const int64_t og = o_ / (fgc_ * bgc_);
    tap_kernel_.resize(static_cast<size_t>(og * ci_) * DomainBytes(dom_));
    tap_gathered_.resize(static_cast<size_t>(ci_ * tap_batch_ * most) * DomainBytes(dom_));
    tap_product_.resize(static_cast<size_t>(og * tap_batch_ * most) * DomainBytes(dom_));
  }

  static void Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
    Sgemm(false, false, m, n, k, a, k, b, n, c, n);
  }
  static void Gemm(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
    Dgemm(false, false, m, n, k, a, k, b, n, c, n);
  }
  // bf16 operands (bits), f32 result; widened for sgemm if oneDNN refuses
  // the shape.
  static void Gemm(int64_t m, int64_t n, int64_t k, const uint16_t* a, const uint16_t* b, float* c) {
    if (LowPrecisionGemm(ET::kBF16, ET::kF32, 1, m, n, k, false, a, false, b, c)) return;
    std::vector<float> wa(m * k), wb(k * n);
    LoadToDomain(ET::kBF16, reinterpret_cast<const uint8_t*>(a), m * k, wa.data());
    LoadToDomain(ET::kBF16, reinterpret_cast<const uint8_t*>(b), k * n, wb.data());
    Sgemm(false, false, m, n, k, wa.data(), k, wb.data(), n, c, n);
  }

  // S: the operands' element as the products read it; F: the result's.
  template <typename S, typename F>
  void RunIm2col(const S* x, const S* w, F* y) {
    const int64_t og = o_ / (fgc_ * bgc_);  // output features per group
    S* col = reinterpret_cast<S*>(col_.data());
    for (int64_t n = 0; n < on_; ++n) {
      for (int64_t g = 0; g < fgc_ * bgc_; ++g) {
        // Feature groups take input channels [g*ci, (g+1)*ci); batch groups
        // take input images g*on + n over all channels.
        const int64_t img = bgc_ > 1 ? g * on_ + n : n;
        const int64_t c0 = bgc_ > 1 ? 0 : g * ci_;
        const S* xin = x + (img * c_ + c0) * is_;
        // Build col[ci * ks, os].
        for (int64_t kk = 0; kk < ks_; ++kk) {
          const int64_t* offs = offsets_.data() + kk * os_;
          for (int64_t c = 0; c < ci_; ++c) {
            S* row = col + (c * ks_ + kk) * os_;
            const S* xc = xin + c * is_;
            for (int64_t oo = 0; oo < os_; ++oo) row[oo] = offs[oo] >= 0 ? xc[offs[oo]] : S(0);
          }
        }
        Gemm(og, os_, ci_ * ks_, w + (g * og) * ci_ * ks_, col, y + (n * o_ + g * og) * os_);
      }
    }
  }

  template <typename S, typename F>
  void RunByTap(const S* x, const S* w, F* y) {
    const int64_t og = o_ / (fgc_ * bgc_);
    std::fill(y, y + on_ * o_ * os_, F(0));
    const int64_t batch = tap_batch_;
    S* wk = reinterpret_cast<S*>(tap_kernel_.data());
    S* gathered = reinterpret_cast<S*>(tap_gathered_.data());
    F* prod = reinterpret_cast<F*>(tap_product_.data());
    for (int64_t g = 0; g < fgc_ * bgc_; ++g) {
      const int64_t c0 = bgc_ > 1 ? 0 : g * ci_;
      const S* wg = w + (g * og) * ci_ * ks_;
      for (int64_t kk = 0; kk < ks_; ++kk) {
        const int64_t v0 = tap_start_[kk], nv = tap_start_[kk + 1] - v0;
        if (nv == 0) continue;
        const int64_t* oo = tap_oo_.data() + v0;
        const int64_t* off = tap_off_.data() + v0;
        // This kernel position's [og, ci] slice.
        for (int64_t o = 0; o < og; ++o)
          for (int64_t c = 0; c < ci_; ++c) wk[o * ci_ + c] = wg[(o * ci_ + c) * ks_ + kk];
        for (int64_t n0 = 0; n0 < on_; n0 += batch) {
          const int64_t nb = std::min(batch, on_ - n0), cols = nb * nv;
          for (int64_t c = 0; c < ci_; ++c) {
            S* dst = gathered + c * cols;
            for (int64_t n = n0; n < n0 + nb; ++n) {
              const int64_t img = bgc_ > 1 ? g * on_ + n : n;
              const S* src = x + (img * c_ + c0 + c) * is_;
              for (int64_t v = 0; v < nv; ++v) dst[v] = src[off[v]];
              dst += nv;
            }
          }
          Gemm(og, cols, ci_, wk, gathered, prod);
          for (int64_t o = 0; o < og; ++o) {
            const F* src = prod + o * cols;
            for (int64_t n = n0; n < n0 + nb; ++n) {
              F* dst = y + (n * o_ + g * og + o) * os_;
              for (int64_t v = 0; v < nv; ++v) dst[oo[v]] += src[v];
              src += nv;
            }
          }
        }
      }
    }
  }

  template <typename S, typename F>
  void RunTyped(const S* x, const S* w, F* y) {
    if (!tap_start_.empty())
      RunByTap(x, w, y);
    else
      RunIm2col(x, w, y);
  }

  void Run(const Buf& input, const Buf& kernel, Buf& out) override {
    if (whole_window_) {
      RunWholeWindow(reinterpret_cast<const float*>(input.data), reinterpret_cast<const float*>(kernel.data),
                     reinterpret_cast<float*>(out.data));
      return;
    }
    if (pointwise_) {
      RunPointwise(reinterpret_cast<const float*>(input.data), reinterpret_cast<const float*>(kernel.data),
                   reinterpret_cast<float*>(out.data));
      return;
    }
    if (planes_ != nullptr) {
      planes_->Run(reinterpret_cast<const float*>(input.data), reinterpret_cast<const float*>(kernel.data),
                   reinterpret_cast<float*>(out.data), GemmThreads());
      return;
    }
    if (direct_) {
      if (dnnl_->Run(input.data, kernel.data, out.data, kernel.version)) return;
      direct_ = false;
      dnnl_.reset();
      PlanCanonical(in_shape_, ker_shape_, out_shape_);
    }
    if (dnnl_ != nullptr) {
      const void* x = bf16_ ? static_cast<const void*>(Bf16Operand(in_, in_type_, input)) : in_.Prepare(input);
      const void* w = bf16_ ? static_cast<const void*>(Bf16Operand(ker_, ker_type_, kernel)) : ker_.Prepare(kernel);
      if (direct_out_) {
        if (dnnl_->Run(x, w, out.data)) return;
      } else if (dnnl_->Run(x, w, canon_out_.data())) {
        StoreCanonical(out);
        return;
      }
    }
    if (bf16_) {
      RunTyped(Bf16Operand(in_, in_type_, input), Bf16Operand(ker_, ker_type_, kernel),
               reinterpret_cast<float*>(canon_out_.data()));
      StoreCanonical(out);
      return;
    }
    const void* x = in_.Prepare(input);
    const void* w = ker_.Prepare(kernel);
    if (dom_ == Domain::kF64) {
      if (DomainOf(in_type_) == Domain::kI64) ToF64InPlace(in_type_, const_cast<void*>(x), input.count);
      if (DomainOf(ker_type_) == Domain::kI64) ToF64InPlace(ker_type_, const_cast<void*>(w), kernel.count);
    }
    if (dom_ == Domain::kF32)
      RunTyped(static_cast<const float*>(x), static_cast<const float*>(w), reinterpret_cast<float*>(canon_out_.data()));
    else
      RunTyped(static_cast<const double*>(x), static_cast<const double*>(w), reinterpret_cast<double*>(canon_out_.data()));
    StoreCanonical(out);
  }

 private:
  // An operand in canonical order as bf16 bits.
  static const uint16_t* Bf16Operand(OperandPrep& prep, ET type, const Buf& in) {
    const uint8_t* permuted = prep.Permute(in);
    return type == ET::kBF16 ? reinterpret_cast<const uint16_t*>(permuted) : prep.ToBf16(permuted);
  }

  // The canonical [N, O, S'...] result, rounded to the output type and
  // laid out as the output's dims.
  void StoreCanonical(Buf& out) {
    Buf canon = Buf::Of(out.type, canon_dims_);
    canon.data = canon_store_.data();
    StoreResult(dom_, canon_out_.data(), canon);
    Transpose(canon, out_perm_, out);
  }

  Domain dom_ = Domain::kF32;
  ET in_type_ = ET::kInvalid, ker_type_ = ET::kInvalid;
  bool bf16_ = false;  // products on the bf16 matmul
  // A window covering the whole input (PlanWholeWindow).
  bool whole_window_ = false, out_batch_first_ = true;
  int64_t s_ = 1, in_batch_stride_ = 0, in_feature_stride_ = 0, ker_out_stride_ = 0, ker_in_stride_ = 0;
  LazyScratch partial_, product_;
  // A 1x1 window over contiguous pixels (PlanPointwise).
  bool pointwise_ = false, pw_w_trans_ = false;
  int64_t pw_x_batch_ = 0, pw_x_feature_ = 0, pw_y_batch_ = 0, pw_y_feature_ = 0, pw_w_ld_ = 0;
  std::unique_ptr<DnnlConvolution> dnnl_;  // null: im2col or taps
  bool direct_ = false;                     // dnnl_ runs on the operands where they lie
  std::unique_ptr<PlaneConvolution> planes_;  // depthwise gradients, plane by plane
  hlo::Shape in_shape_, ker_shape_, out_shape_;  // for PlanCanonical after a direct failure
  bool direct_out_ = false;                 // dnnl_ writes the output itself
  ET out_type_ = ET::kInvalid;
  OperandPrep in_, ker_;
  int64_t nsp_ = 0, n_ = 0, c_ = 0, o_ = 0, ci_ = 0, on_ = 0, fgc_ = 1, bgc_ = 1;
  int64_t ks_ = 1, os_ = 1, is_ = 1;
  std::vector<int64_t> in_sp_, k_sp_, out_sp_, out_perm_, canon_dims_;
  std::vector<int64_t> in_perm_, ker_perm_;  // canonical dim order of the operands
  std::vector<hlo::WindowDim> win_;
  LazyScratch col_, canon_out_, canon_store_;
  // im2col: offsets_[kk * os + oo] is InputOffset(kk, oo).
  std::vector<int64_t> offsets_;
  // Tap by tap: kernel position kk meets pairs [tap_start_[kk], tap_start_[kk + 1]),
  // multiplied tap_batch_ images at a time in the scratch below.
  std::vector<int64_t> tap_start_, tap_oo_, tap_off_;
  int64_t tap_batch_ = 1;
  LazyScratch tap_kernel_, tap_gathered_, tap_product_;
};

}  // namespace

std::vector<int64_t> DotFreeDims(int64_t rank, const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& contracting) {
  std::vector<int64_t> f;
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), i) == contracting.end())
      f.push_back(i);
  return f;
}

DotOperandOrders DotOperandOrdersOf(int64_t rank, const std::vector<int64_t>& batch,
                                    const std::vector<int64_t>& contracting) {
  const std::vector<int64_t> free = DotFreeDims(rank, batch, contracting);
  DotOperandOrders o{batch, batch};
  o.contracting_first.insert(o.contracting_first.end(), contracting.begin(), contracting.end());
  o.contracting_first.insert(o.contracting_first.end(), free.begin(), free.end());
  o.free_first.insert(o.free_first.end(), free.begin(), free.end());
  o.free_first.insert(o.free_first.end(), contracting.begin(), contracting.end());
  return o;
}

absl::StatusOr<std::unique_ptr<DotKernel>> PlanDot(const hlo::Shape& lhs, const hlo::Shape& rhs,
                                                   const hlo::DotDims& dims,
                                                   const hlo::Shape& out) {
  if (std::unique_ptr<DotKernel> skinny = PlanSkinnyDot(lhs, rhs, dims, out)) return skinny;
  auto k = std::make_unique<GeneralDot>();
  absl::Status s = k->Init(lhs, rhs, dims, out);
  if (!s.ok()) return s;
  return std::unique_ptr<DotKernel>(std::move(k));
}

absl::StatusOr<std::unique_ptr<DotKernel>> PlanConvolution(const hlo::Shape& input,
                                                           const hlo::Shape& kernel,
                                                           const hlo::Shape& out,
                                                           const hlo::Attributes& attrs) {
  if (!attrs.conv) return absl::InvalidArgumentError("convolution without dim_labels");
  if (hlo::IsComplex(input.type) || hlo::IsComplex(kernel.type) || hlo::IsComplex(out.type))
    return PlanComplexConvolution(input, kernel, out, attrs);
  auto k = std::make_unique<ConvKernel>();
  absl::Status s = k->Init(input, kernel, out, attrs);
  if (!s.ok()) return s;
  return std::unique_ptr<DotKernel>(std::move(k));
}

}  // namespace neuron::kernels
