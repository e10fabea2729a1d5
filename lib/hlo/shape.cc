#include "lib/hlo/shape.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neuron::hlo {
namespace {

struct TypeInfo {
  ElementType type;
  std::string_view name;
  int bits;
};

constexpr TypeInfo kTypes[] = {
    {ElementType::kPred, "pred", 1},
    {ElementType::kS1, "s1", 1},
    {ElementType::kS2, "s2", 2},
    {ElementType::kS4, "s4", 4},
    {ElementType::kS8, "s8", 8},
    {ElementType::kS16, "s16", 16},
    {ElementType::kS32, "s32", 32},
    {ElementType::kS64, "s64", 64},
    {ElementType::kU1, "u1", 1},
    {ElementType::kU2, "u2", 2},
    {ElementType::kU4, "u4", 4},
    {ElementType::kU8, "u8", 8},
    {ElementType::kU16, "u16", 16},
    {ElementType::kU32, "u32", 32},
    {ElementType::kU64, "u64", 64},
    {ElementType::kF16, "f16", 16},
    {ElementType::kF32, "f32", 32},
    {ElementType::kBF16, "bf16", 16},
    {ElementType::kF64, "f64", 64},
    {ElementType::kF8E5M2, "f8e5m2", 8},
    {ElementType::kF8E4M3, "f8e4m3", 8},
    {ElementType::kF8E4M3FN, "f8e4m3fn", 8},
    {ElementType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {ElementType::kF8E3M4, "f8e3m4", 8},
    {ElementType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    {ElementType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    {ElementType::kF4E2M1FN, "f4e2m1fn", 4},
    {ElementType::kF8E8M0FNU, "f8e8m0fnu", 8},
    {ElementType::kF6E3M2FN, "f6e3m2fn", 6},
    {ElementType::kF6E2M3FN, "f6e2m3fn", 6},
    {ElementType::kC64, "c64", 64},
    {ElementType::kC128, "c128", 128},
    {ElementType::kTuple, "tuple", 0},
    {ElementType::kOpaque, "opaque", 0},
    {ElementType::kToken, "token", 0},
};

const TypeInfo* Find(ElementType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

std::string DimText(const Shape& s, size_t i) {
  if (s.dims[i] == std::numeric_limits<int64_t>::min()) return "?";
  if (s.IsDynamicDim(i)) return absl::StrCat("<=", s.dims[i]);
  return absl::StrCat(s.dims[i]);
}

}  // namespace

std::string_view ElementTypeName(ElementType type) {
  const TypeInfo* info = Find(type);
  return info ? info->name : "invalid";
}

std::optional<ElementType> ElementTypeFromName(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

bool IsKnownElementType(int32_t value) {
  return Find(static_cast<ElementType>(value)) != nullptr;
}

bool IsFloatingPoint(ElementType t) {
  switch (t) {
    case ElementType::kF16:
    case ElementType::kF32:
    case ElementType::kBF16:
    case ElementType::kF64:
    case ElementType::kF8E5M2:
    case ElementType::kF8E4M3:
    case ElementType::kF8E4M3FN:
    case ElementType::kF8E4M3B11FNUZ:
    case ElementType::kF8E3M4:
    case ElementType::kF8E5M2FNUZ:
    case ElementType::kF8E4M3FNUZ:
    case ElementType::kF4E2M1FN:
    case ElementType::kF8E8M0FNU:
    case ElementType::kF6E3M2FN:
    case ElementType::kF6E2M3FN:
      return true;
    default:
      return false;
  }
}

bool IsComplex(ElementType t) {
  return t == ElementType::kC64 || t == ElementType::kC128;
}

bool IsSignedInt(ElementType t) {
  switch (t) {
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
      return true;
    default:
      return false;
  }
}

bool IsUnsignedInt(ElementType t) {
  switch (t) {
    case ElementType::kU1:
    case ElementType::kU2:
    case ElementType::kU4:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
      return true;
    default:
      return false;
  }
}

bool IsArrayType(ElementType t) {
  return t == ElementType::kPred || IsInteger(t) || IsFloatingPoint(t) ||
         IsComplex(t);
}

int BitWidth(ElementType type) {
  const TypeInfo* info = Find(type);
  return info ? info->bits : 0;
}

int StorageBytes(ElementType type) {
  int bits = BitWidth(type);
  return bits <= 8 ? (bits == 0 ? 0 : 1) : bits / 8;
}

ElementType ComplexComponentType(ElementType type) {
  if (type == ElementType::kC64) return ElementType::kF32;
  if (type == ElementType::kC128) return ElementType::kF64;
  return type;
}

Shape Shape::Array(ElementType type, std::vector<int64_t> dims) {
  Shape s;
  s.type = type;
  s.dims = std::move(dims);
  return s;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.type = ElementType::kTuple;
  s.tuple = std::move(elements);
  return s;
}

Shape Shape::Token() {
  Shape s;
  s.type = ElementType::kToken;
  return s;
}

std::optional<int64_t> Shape::ElementCount() const {
  if (!IsArray()) return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return std::nullopt;
    }
    n *= d;
  }
  return n;
}

bool Shape::HasUnknownDimension() const {
  for (const Shape& element : tuple) {
    if (element.HasUnknownDimension()) return true;
  }
  for (bool d : dynamic) {
    if (d) return true;
  }
  for (int64_t d : dims) {
    if (d == std::numeric_limits<int64_t>::min()) return true;  // "?"
  }
  return false;
}

std::optional<int64_t> Shape::ArrayBytes() const {
  if (IsTuple()) {
    for (const Shape& element : tuple) {
      if (!element.ArrayBytes()) return std::nullopt;
    }
    return 0;
  }
  if (!IsArray()) return 0;
  const std::optional<int64_t> count = ElementCount();
  int64_t bytes = 0;
  if (!count || __builtin_mul_overflow(*count, int64_t{StorageBytes(type)}, &bytes)) return std::nullopt;
  return bytes;
}

std::string Shape::ToString(bool with_layout) const {
  if (IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple.size(); ++i) {
      if (i) out += ", ";
      out += tuple[i].ToString(with_layout);
    }
    return out + ")";
  }
  if (IsToken()) return "token[]";
  std::string out(ElementTypeName(type));
  out += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += DimText(*this, i);
  }
  out += "]";
  if (with_layout && layout) {
    out += "{" + absl::StrJoin(layout->minor_to_major, ",");
    if (!layout->details.empty()) out += ":" + layout->details;
    out += "}";
  }
  return out;
}

bool Shape::Compatible(const Shape& other) const {
  if (type != other.type) return false;
  if (IsTuple()) {
    if (tuple.size() != other.tuple.size()) return false;
    for (size_t i = 0; i < tuple.size(); ++i) {
      if (!tuple[i].Compatible(other.tuple[i])) return false;
    }
    return true;
  }
  return dims == other.dims;
}

bool Shape::SameDims(const Shape& other) const {
  if (!Compatible(other)) return false;
  if (IsTuple()) {
    for (size_t i = 0; i < tuple.size(); ++i) {
      if (!tuple[i].SameDims(other.tuple[i])) return false;
    }
    return true;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (IsDynamicDim(i) != other.IsDynamicDim(i)) return false;
  }
  return true;
}

const Shape* Shape::Subshape(const std::vector<int64_t>& index) const {
  const Shape* s = this;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= static_cast<int64_t>(s->tuple.size())) return nullptr;
    s = &s->tuple[static_cast<size_t>(i)];
  }
  return s;
}

}  // namespace neuron::hlo
