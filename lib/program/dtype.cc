#include "lib/program/dtype.h"

#include "absl/strings/str_cat.h"

namespace neuron::program {
namespace {

using hlo::ElementType;

struct DtypeRow {
  ElementType type;
  const char* name;
};

// ml_dtypes' spelling for the types NumPy itself lacks.
constexpr DtypeRow kDtypes[] = {
    {ElementType::kPred, "bool"},         {ElementType::kS8, "int8"},
    {ElementType::kS16, "int16"},         {ElementType::kS32, "int32"},
    {ElementType::kS64, "int64"},         {ElementType::kU8, "uint8"},
    {ElementType::kU16, "uint16"},        {ElementType::kU32, "uint32"},
    {ElementType::kU64, "uint64"},        {ElementType::kF16, "float16"},
    {ElementType::kF32, "float32"},       {ElementType::kF64, "float64"},
    {ElementType::kBF16, "bfloat16"},     {ElementType::kC64, "complex64"},
    {ElementType::kC128, "complex128"},   {ElementType::kS4, "int4"},
    {ElementType::kU4, "uint4"},          {ElementType::kS2, "int2"},
    {ElementType::kU2, "uint2"},          {ElementType::kS1, "int1"},
    {ElementType::kU1, "uint1"},          {ElementType::kF8E5M2, "float8_e5m2"},
    {ElementType::kF8E4M3, "float8_e4m3"}, {ElementType::kF8E4M3FN, "float8_e4m3fn"},
    {ElementType::kF8E4M3B11FNUZ, "float8_e4m3b11fnuz"},
    {ElementType::kF8E3M4, "float8_e3m4"}, {ElementType::kF8E5M2FNUZ, "float8_e5m2fnuz"},
    {ElementType::kF8E4M3FNUZ, "float8_e4m3fnuz"},
    {ElementType::kF4E2M1FN, "float4_e2m1fn"},
    {ElementType::kF8E8M0FNU, "float8_e8m0fnu"},
    {ElementType::kF6E3M2FN, "float6_e3m2fn"},
    {ElementType::kF6E2M3FN, "float6_e2m3fn"},
};

}  // namespace

std::string DtypeName(ElementType type) {
  for (const DtypeRow& row : kDtypes) {
    if (row.type == type) return row.name;
  }
  return "";
}

std::optional<ElementType> DtypeFromName(std::string_view name) {
  for (const DtypeRow& row : kDtypes) {
    if (row.name == name) return row.type;
  }
  return std::nullopt;
}

std::string NpyDescr(ElementType type) {
  if (type == ElementType::kPred) return "|b1";
  int bytes = hlo::StorageBytes(type);
  char kind = 'u';
  if (hlo::IsComplex(type)) {
    kind = 'c';
  } else if (type == ElementType::kF16 || type == ElementType::kF32 ||
             type == ElementType::kF64) {
    kind = 'f';
  } else if (hlo::IsSignedInt(type)) {
    kind = 'i';
  }
  return absl::StrCat(bytes == 1 ? "|" : "<", std::string(1, kind), bytes);
}

std::optional<int64_t> ArrayBytes(const hlo::Shape& shape) {
  if (!shape.IsArray()) return std::nullopt;
  std::optional<int64_t> count = shape.ElementCount();
  int width = hlo::StorageBytes(shape.type);
  if (!count || width <= 0 || *count > INT64_MAX / width) return std::nullopt;
  return *count * width;
}

}  // namespace neuron::program
