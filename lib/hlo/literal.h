// Constant values: a shape plus densely stored elements in row-major
// (logical) order, or a tuple of literals. Narrow types are stored as their
// raw bits (bf16 as 2 bytes, s4 as one byte per element, pred as one byte),
// so a Literal keeps exactly what the module said.
#ifndef NEURON_LIB_HLO_LITERAL_H_
#define NEURON_LIB_HLO_LITERAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/hlo/shape.h"

namespace neuron::hlo {

class Literal {
 public:
  Literal() = default;
  // A zero-filled literal of an array shape (no layout needed).
  static Literal Zeros(const Shape& shape);
  static Literal MakeTuple(std::vector<Literal> elements);
  // A literal of an array shape holding `data` (StorageBytes(type) bytes an
  // element, row-major), for a producer that writes every byte itself and
  // so need not have them zeroed first; a short `data` is zero-padded.
  static Literal FromData(const Shape& shape, std::vector<uint8_t> data);
  // A literal whose values were left out by the printer (`{...}`).
  static Literal Elided(const Shape& shape);

  const Shape& shape() const { return shape_; }
  bool elided() const { return elided_; }
  // For tuple literals.
  const std::vector<Literal>& elements() const { return elements_; }
  std::vector<Literal>& mutable_elements() { return elements_; }

  int64_t element_count() const {
    int bytes = StorageBytes(shape_.type);
    return bytes ? static_cast<int64_t>(data_.size()) / bytes : 0;
  }
  // Raw storage, StorageBytes(type) little-endian bytes per element.
  const std::vector<uint8_t>& data() const { return data_; }
  std::vector<uint8_t>& mutable_data() { return data_; }

  // Element i converted to double (real part for complex) / int64 / the
  // imaginary part. Integers and pred convert exactly where they fit.
  double GetDouble(int64_t i) const;
  int64_t GetInt(int64_t i) const;
  double GetImag(int64_t i) const;
  // Stores a value in element i, converting to the element type (floats
  // round to nearest even; integers wrap to the type's width).
  void SetDouble(int64_t i, double value);
  void SetInt(int64_t i, int64_t value);
  void SetComplex(int64_t i, double re, double im);

  // Values in HLO text syntax: "{1, 2, 3}", "{ {1, 2}, {3, 4} }", "3.5",
  // "(1, {2})" for tuples, "{...}" when elided.
  std::string ToString() const;

 private:
  uint64_t RawBits(int64_t i) const;
  void SetRawBits(int64_t i, uint64_t bits);

  Shape shape_;
  bool elided_ = false;
  std::vector<uint8_t> data_;
  std::vector<Literal> elements_;
};

// Formats a double the way HLO text does: integral values without a
// fraction ("2"), others with enough digits to read back, "inf", "-inf",
// "nan".
std::string FormatHloDouble(double value);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_LITERAL_H_
