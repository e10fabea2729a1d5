#include "lib/hlo/literal.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/hlo/float_types.h"

namespace neuron::hlo {

Literal Literal::Zeros(const Shape& shape) {
  Literal lit;
  lit.shape_ = shape;
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple) lit.elements_.push_back(Zeros(s));
    return lit;
  }
  int64_t n = shape.ElementCount().value_or(0);
  lit.data_.assign(static_cast<size_t>(n) * StorageBytes(shape.type), 0);
  return lit;
}

Literal Literal::FromData(const Shape& shape, std::vector<uint8_t> data) {
  Literal lit;
  lit.shape_ = shape;
  lit.data_ = std::move(data);
  lit.data_.resize(static_cast<size_t>(shape.ElementCount().value_or(0)) * StorageBytes(shape.type));
  return lit;
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  Literal lit;
  std::vector<Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  lit.shape_ = Shape::Tuple(std::move(shapes));
  lit.elements_ = std::move(elements);
  return lit;
}

Literal Literal::Elided(const Shape& shape) {
  Literal lit;
  lit.shape_ = shape;
  lit.elided_ = true;
  return lit;
}

uint64_t Literal::RawBits(int64_t i) const {
  int bytes = StorageBytes(shape_.type);
  if (IsComplex(shape_.type)) bytes /= 2;  // the real part
  uint64_t bits = 0;
  std::memcpy(&bits, data_.data() + i * StorageBytes(shape_.type), bytes);
  return bits;
}

void Literal::SetRawBits(int64_t i, uint64_t bits) {
  int bytes = StorageBytes(shape_.type);
  if (IsComplex(shape_.type)) bytes /= 2;
  std::memcpy(data_.data() + i * StorageBytes(shape_.type), &bits, bytes);
}

double Literal::GetDouble(int64_t i) const {
  ElementType t = shape_.type;
  if (IsFloatingPoint(t) || IsComplex(t)) {
    return DecodeFloat(ComplexComponentType(t), RawBits(i));
  }
  if (IsUnsignedInt(t)) return static_cast<double>(static_cast<uint64_t>(GetInt(i)));
  return static_cast<double>(GetInt(i));
}

double Literal::GetImag(int64_t i) const {
  if (!IsComplex(shape_.type)) return 0;
  ElementType part = ComplexComponentType(shape_.type);
  int half = StorageBytes(shape_.type) / 2;
  uint64_t bits = 0;
  std::memcpy(&bits, data_.data() + i * StorageBytes(shape_.type) + half, half);
  return DecodeFloat(part, bits);
}

int64_t Literal::GetInt(int64_t i) const {
  ElementType t = shape_.type;
  if (IsFloatingPoint(t) || IsComplex(t)) {
    return static_cast<int64_t>(GetDouble(i));
  }
  uint64_t bits = RawBits(i);
  int width = BitWidth(t);
  if (t == ElementType::kPred) return bits != 0;
  if (IsSignedInt(t) && width < 64 && (bits >> (width - 1)) & 1) {
    bits |= ~uint64_t{0} << width;  // sign-extend
  }
  return static_cast<int64_t>(bits);
}

void Literal::SetDouble(int64_t i, double value) {
  ElementType t = shape_.type;
  if (IsFloatingPoint(t)) {
    SetRawBits(i, EncodeFloat(t, value));
  } else if (IsComplex(t)) {
    SetComplex(i, value, 0);
  } else if (t == ElementType::kPred) {
    SetRawBits(i, value != 0);
  } else if (std::isnan(value)) {
    SetInt(i, 0);
  } else if (IsUnsignedInt(t) && value >= 9.2e18) {
    // Saturate: converting a double at or past 2^64 (or inf) is undefined.
    SetRawBits(i, value >= 18446744073709551616.0
                      ? UINT64_MAX
                      : static_cast<uint64_t>(value));
  } else {
    SetInt(i, static_cast<int64_t>(std::fmax(std::fmin(value, 9.2e18), -9.2e18)));
  }
}

void Literal::SetInt(int64_t i, int64_t value) {
  ElementType t = shape_.type;
  if (IsFloatingPoint(t) || IsComplex(t)) {
    SetDouble(i, static_cast<double>(value));
    return;
  }
  uint64_t bits = static_cast<uint64_t>(value);
  int width = BitWidth(t);
  if (t == ElementType::kPred) bits = value != 0;
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  SetRawBits(i, bits);
}

void Literal::SetComplex(int64_t i, double re, double im) {
  ElementType part = ComplexComponentType(shape_.type);
  int half = StorageBytes(shape_.type) / 2;
  uint64_t re_bits = EncodeFloat(part, re), im_bits = EncodeFloat(part, im);
  uint8_t* p = data_.data() + i * StorageBytes(shape_.type);
  std::memcpy(p, &re_bits, half);
  std::memcpy(p + half, &im_bits, half);
}

std::string FormatHloDouble(double value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {
    if (value == 0 && std::signbit(value)) return "-0";
    return absl::StrFormat("%.0f", value);
  }
  // Shortest form that reads back to the same double.
  for (int digits = 6; digits <= 17; ++digits) {
    std::string s = absl::StrFormat("%.*g", digits, value);
    if (std::strtod(s.c_str(), nullptr) == value) return s;
  }
  return absl::StrFormat("%.17g", value);
}

namespace {

std::string ElementText(const Literal& lit, int64_t i) {
  ElementType t = lit.shape().type;
  if (t == ElementType::kPred) return lit.GetInt(i) ? "true" : "false";
  if (IsComplex(t)) {
    return absl::StrCat("(", FormatHloDouble(lit.GetDouble(i)), ", ",
                        FormatHloDouble(lit.GetImag(i)), ")");
  }
  if (IsFloatingPoint(t)) return FormatHloDouble(lit.GetDouble(i));
  if (IsUnsignedInt(t)) return absl::StrCat(static_cast<uint64_t>(lit.GetInt(i)));
  return absl::StrCat(lit.GetInt(i));
}

void AppendArray(const Literal& lit, size_t dim, int64_t* next, std::string* out) {
  const std::vector<int64_t>& dims = lit.shape().dims;
  if (dim == dims.size()) {
    *out += ElementText(lit, (*next)++);
    return;
  }
  *out += "{";
  for (int64_t i = 0; i < dims[dim]; ++i) {
    if (i) *out += ", ";
    AppendArray(lit, dim + 1, next, out);
  }
  *out += "}";
}

}  // namespace

std::string Literal::ToString() const {
  if (elided_) return "{...}";
  if (shape_.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out += ", ";
      out += elements_[i].ToString();
    }
    return out + ")";
  }
  if (!shape_.IsArray()) return "";
  if (element_count() != shape_.ElementCount().value_or(-1)) return "{...}";
  std::string out;
  int64_t next = 0;
  AppendArray(*this, 0, &next, &out);
  return out;
}

}  // namespace neuron::hlo
