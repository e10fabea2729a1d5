// Shapes of HLO values: an element type with dimensions (an array), a tuple
// of shapes, or a token. Layouts are kept (minor-to-major plus the rest of
// the layout text, e.g. tiling) but never change what a shape means.
#ifndef NEURON_LIB_HLO_SHAPE_H_
#define NEURON_LIB_HLO_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neuron::hlo {

// Values are XLA's PrimitiveType numbers so the proto reader maps 1:1.
enum class ElementType : int32_t {
  kInvalid = 0,
  kPred = 1,
  kS1 = 30,
  kS2 = 26,
  kS4 = 21,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU1 = 31,
  kU2 = 27,
  kU4 = 22,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kBF16 = 16,
  kF64 = 12,
  kF8E5M2 = 19,
  kF8E4M3 = 28,
  kF8E4M3FN = 20,
  kF8E4M3B11FNUZ = 23,
  kF8E3M4 = 29,
  kF8E5M2FNUZ = 24,
  kF8E4M3FNUZ = 25,
  kF4E2M1FN = 32,
  kF8E8M0FNU = 33,
  kF6E3M2FN = 35,
  kF6E2M3FN = 36,
  kC64 = 15,
  kC128 = 18,
  kTuple = 13,
  kOpaque = 14,
  kToken = 17,
};

// Lower-case name as HLO text writes it ("f32", "bf16", "f8e4m3fn").
std::string_view ElementTypeName(ElementType type);
// Inverse of ElementTypeName; nullopt for an unknown name.
std::optional<ElementType> ElementTypeFromName(std::string_view name);
// True for a number that is one of the enum's values.
bool IsKnownElementType(int32_t value);

bool IsFloatingPoint(ElementType type);  // f16, bf16, f32, f64, f8/f6/f4
bool IsComplex(ElementType type);
bool IsSignedInt(ElementType type);
bool IsUnsignedInt(ElementType type);
inline bool IsInteger(ElementType type) {
  return IsSignedInt(type) || IsUnsignedInt(type);
}
// Array element types (everything but tuple, token, opaque, invalid).
bool IsArrayType(ElementType type);
// Bits of one value (pred 1, s4 4, bf16 16, c64 64).
int BitWidth(ElementType type);
// Bytes one element takes in a Literal: sub-byte types use a whole byte,
// as in LiteralProto.
int StorageBytes(ElementType type);
// The real type of a complex type (c64 -> f32); the type itself otherwise.
ElementType ComplexComponentType(ElementType type);

struct Layout {
  std::vector<int64_t> minor_to_major;
  // What follows ':' in the text form (tiles, memory space...), verbatim.
  std::string details;
  bool operator==(const Layout&) const = default;
};

struct Shape {
  ElementType type = ElementType::kInvalid;
  std::vector<int64_t> dims;
  // Same length as dims when any dimension is dynamic ("<=8" or "?");
  // empty otherwise.
  std::vector<bool> dynamic;
  std::optional<Layout> layout;
  std::vector<Shape> tuple;  // elements when type == kTuple

  static Shape Array(ElementType type, std::vector<int64_t> dims);
  static Shape Scalar(ElementType type) { return Array(type, {}); }
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();

  bool IsTuple() const { return type == ElementType::kTuple; }
  bool IsToken() const { return type == ElementType::kToken; }
  bool IsArray() const { return IsArrayType(type); }
  bool IsScalar() const { return IsArray() && dims.empty(); }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  bool IsDynamicDim(size_t i) const { return i < dynamic.size() && dynamic[i]; }

  // Product of the dimensions; nullopt when it overflows int64 or a
  // dimension is negative. Tuples and tokens have no elements (0).
  std::optional<int64_t> ElementCount() const;
  // An array's bytes (ElementCount() x StorageBytes), nullopt when that does
  // not fit in int64; every array of a tuple must fit (the tuple's own
  // figure is 0, as for tokens).
  std::optional<int64_t> ArrayBytes() const;
  // Whether any array of the shape has a dynamic or unknown ("?")
  // dimension (its size is then not fixed by the shape).
  bool HasUnknownDimension() const;

  // Text form, e.g. "f32[2,3]{1,0}" or "(s32[], f32[4])".
  std::string ToString(bool with_layout = true) const;

  // Equal types and dimensions (recursively for tuples); layouts and
  // dynamic flags ignored.
  bool Compatible(const Shape& other) const;
  // The shape at a shape index (a path of tuple element numbers), or null
  // where the path leaves the tuple tree.
  const Shape* Subshape(const std::vector<int64_t>& index) const;
  // Same, and also equal dynamic flags.
  bool SameDims(const Shape& other) const;
  bool operator==(const Shape&) const = default;
};

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_SHAPE_H_
