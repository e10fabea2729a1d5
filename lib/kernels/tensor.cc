#include "lib/kernels/tensor.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neuron::kernels {

int64_t ElementCountOf(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Tensor::Tensor(ElementType type, std::vector<int64_t> dims)
    : type_(type), dims_(std::move(dims)) {
  size_t bytes = byte_size();
  owned_ = AllocateAlignedBytes(bytes);
  std::memset(owned_.get(), 0, bytes ? bytes : 1);
  data_ = owned_.get();
}

Tensor Tensor::Borrow(ElementType type, std::vector<int64_t> dims, void* data) {
  Tensor t;
  t.type_ = type;
  t.dims_ = std::move(dims);
  t.data_ = static_cast<uint8_t*>(data);
  return t;
}

Tensor::Tensor(const Tensor& other) : type_(other.type_), dims_(other.dims_) {
  size_t bytes = byte_size();
  owned_ = AllocateAlignedBytes(bytes);
  if (bytes) std::memcpy(owned_.get(), other.data_, bytes);
  data_ = owned_.get();
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

int64_t Tensor::element_count() const { return ElementCountOf(dims_); }

size_t Tensor::byte_size() const {
  return static_cast<size_t>(element_count()) * hlo::StorageBytes(type_);
}

std::string Tensor::ShapeString() const {
  return absl::StrCat(std::string(hlo::ElementTypeName(type_)), "[",
                      absl::StrJoin(dims_, ","), "]");
}

}  // namespace neuron::kernels
