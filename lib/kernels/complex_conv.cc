#include "lib/kernels/complex_conv.h"

#include <cstring>
#include <vector>

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

hlo::Shape RealShape(const hlo::Shape& s) {
  hlo::Shape r = s;
  r.type = hlo::ComplexComponentType(s.type);
  return r;
}

class ComplexConv : public DotKernel {
 public:
  absl::Status Init(const hlo::Shape& in, const hlo::Shape& ker, const hlo::Shape& out,
                    const hlo::Attributes& attrs) {
    if (in.type != ker.type || in.type != out.type)
      return absl::UnimplementedError("convolution mixing complex and other element types");
    absl::StatusOr<std::unique_ptr<DotKernel>> k =
        PlanConvolution(RealShape(in), RealShape(ker), RealShape(out), attrs);
    if (!k.ok()) return k.status();
    real_ = std::move(*k);
    const ET part = hlo::ComplexComponentType(in.type);
    for (int i = 0; i < 2; ++i) {
      in_[i] = Buf::Of(part, in.dims);
      ker_[i] = Buf::Of(part, ker.dims);
    }
    for (Buf& p : prod_) p = Buf::Of(part, out.dims);
    return absl::OkStatus();
  }

  void Run(const Buf& lhs, const Buf& rhs, Buf& out) override {
    if (lhs.type == ET::kC64) RunTyped<float>(lhs, rhs, out);
    else RunTyped<double>(lhs, rhs, out);
  }

 private:
  template <typename T>
  static void Split(const Buf& c, Buf* parts, std::vector<T>* storage) {
    storage[0].resize(c.count);
    storage[1].resize(c.count);
    const T* src = reinterpret_cast<const T*>(c.data);
    for (int64_t i = 0; i < c.count; ++i) {
      storage[0][i] = src[2 * i];
      storage[1][i] = src[2 * i + 1];
    }
    for (int p = 0; p < 2; ++p) parts[p].data = reinterpret_cast<uint8_t*>(storage[p].data());
  }

  template <typename T>
  void RunTyped(const Buf& lhs, const Buf& rhs, Buf& out) {
    std::vector<T> in_store[2], ker_store[2], prod_store[4];
    Split<T>(lhs, in_, in_store);
    Split<T>(rhs, ker_, ker_store);
    // prod_[2 * i + j] = real part i of the input times part j of the kernel.
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        Buf& p = prod_[2 * i + j];
        prod_store[2 * i + j].resize(p.count);
        p.data = reinterpret_cast<uint8_t*>(prod_store[2 * i + j].data());
        real_->Run(in_[i], ker_[j], p);
      }
    T* dst = reinterpret_cast<T*>(out.data);
    for (int64_t e = 0; e < out.count; ++e) {
      dst[2 * e] = prod_store[0][e] - prod_store[3][e];
      dst[2 * e + 1] = prod_store[1][e] + prod_store[2][e];
    }
  }

  std::unique_ptr<DotKernel> real_;
  Buf in_[2], ker_[2], prod_[4];
};

}  // namespace

absl::StatusOr<std::unique_ptr<DotKernel>> PlanComplexConvolution(const hlo::Shape& input,
                                                                  const hlo::Shape& kernel,
                                                                  const hlo::Shape& out,
                                                                  const hlo::Attributes& attrs) {
  auto k = std::make_unique<ComplexConv>();
  absl::Status s = k->Init(input, kernel, out, attrs);
  if (!s.ok()) return s;
  return std::unique_ptr<DotKernel>(std::move(k));
}

}  // namespace neuron::kernels
