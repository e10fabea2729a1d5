// A host tensor handed to or returned by an Executable: element type,
// dimensions (row-major, logical order) and bytes that are either owned or
// borrowed from the caller. Narrow types are stored as in hlo::Literal:
// StorageBytes(type) little-endian bytes per element (bf16 = 2, pred = 1).
#ifndef NEURON_LIB_KERNELS_TENSOR_H_
#define NEURON_LIB_KERNELS_TENSOR_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "lib/hlo/shape.h"
#include "lib/kernels/aligned_bytes.h"

namespace neuron::kernels {

using hlo::ElementType;

class Tensor {
 public:
  Tensor() = default;
  // Owned, zero-filled, 64-byte aligned storage.
  Tensor(ElementType type, std::vector<int64_t> dims);
  // Borrowed storage: `data` must outlive the tensor and hold byte_size().
  static Tensor Borrow(ElementType type, std::vector<int64_t> dims, void* data);

  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;

  ElementType type() const { return type_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t element_count() const;
  size_t byte_size() const;
  bool owns_data() const { return owned_ != nullptr; }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  template <typename T>
  T* as() { return reinterpret_cast<T*>(data_); }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data_); }

  // "f32[2,3]".
  std::string ShapeString() const;

 private:
  ElementType type_ = ElementType::kInvalid;
  std::vector<int64_t> dims_;
  AlignedBytes owned_;
  uint8_t* data_ = nullptr;
};

// Product of dims (1 for a scalar).
int64_t ElementCountOf(const std::vector<int64_t>& dims);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_TENSOR_H_
