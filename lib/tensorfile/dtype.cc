#include "lib/tensorfile/dtype.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neuron::tensorfile {
namespace {

using hlo::ElementType;

struct NpyRow {
  const char* kind;  // the descriptor without its byte-order character
  ElementType type;
  int bytes;
};

constexpr NpyRow kNpy[] = {
    {"b1", ElementType::kPred, 1}, {"i1", ElementType::kS8, 1},   {"u1", ElementType::kU8, 1},
    {"i2", ElementType::kS16, 2},  {"u2", ElementType::kU16, 2},  {"i4", ElementType::kS32, 4},
    {"u4", ElementType::kU32, 4},  {"i8", ElementType::kS64, 8},  {"u8", ElementType::kU64, 8},
    {"f2", ElementType::kF16, 2},  {"f4", ElementType::kF32, 4},  {"f8", ElementType::kF64, 8},
    {"c8", ElementType::kC64, 8},  {"c16", ElementType::kC128, 16},
    {"V1", ElementType::kInvalid, 1}, {"V2", ElementType::kInvalid, 2},
};

struct SafetensorsRow {
  const char* name;
  ElementType type;
};

constexpr SafetensorsRow kSafetensors[] = {
    {"BOOL", ElementType::kPred},  {"U8", ElementType::kU8},     {"I8", ElementType::kS8},
    {"U16", ElementType::kU16},    {"I16", ElementType::kS16},   {"U32", ElementType::kU32},
    {"I32", ElementType::kS32},    {"U64", ElementType::kU64},   {"I64", ElementType::kS64},
    {"F16", ElementType::kF16},    {"BF16", ElementType::kBF16}, {"F32", ElementType::kF32},
    {"F64", ElementType::kF64},    {"F8_E4M3", ElementType::kF8E4M3FN},
    {"F8_E5M2", ElementType::kF8E5M2},
};

}  // namespace

std::optional<StoredType> FromNpyDescr(std::string_view descr) {
  // Earlier writers of this project spelled bf16 as a name of its own.
  if (descr == "bfloat16" || descr == "<bf16") return StoredType{std::string(descr), ElementType::kBF16, 2};
  if (descr.size() < 3) return std::nullopt;
  const char order = descr[0];
  if (order != '<' && order != '|' && order != '=') return std::nullopt;
  for (const NpyRow& row : kNpy) {
    if (descr.substr(1) == row.kind) return StoredType{std::string(descr), row.type, row.bytes};
  }
  return std::nullopt;
}

std::string NpyDescrOf(ElementType type) {
  for (const NpyRow& row : kNpy) {
    if (row.type == type && type != ElementType::kInvalid) {
      return absl::StrCat(row.bytes == 1 ? "|" : "<", row.kind);
    }
  }
  const int bytes = hlo::StorageBytes(type);
  return absl::StrCat(bytes == 1 ? "|u" : "<u", bytes);
}

std::optional<StoredType> FromSafetensorsName(std::string_view name) {
  for (const SafetensorsRow& row : kSafetensors) {
    if (name == row.name) return StoredType{std::string(name), row.type, hlo::StorageBytes(row.type)};
  }
  return std::nullopt;
}

std::string SafetensorsNameOf(ElementType type) {
  for (const SafetensorsRow& row : kSafetensors) {
    if (row.type == type) return row.name;
  }
  return "";
}

bool HoldsType(const StoredType& stored, ElementType type) {
  if (stored.type == type && type != ElementType::kInvalid) return true;
  const bool raw = stored.type == ElementType::kInvalid || hlo::IsUnsignedInt(stored.type);
  const bool numpy_lacks = hlo::IsFloatingPoint(type) && type != ElementType::kF32 &&
                           type != ElementType::kF64 && type != ElementType::kF16;
  return raw && numpy_lacks && stored.item_bytes == hlo::StorageBytes(type);
}

std::string DescribeArray(std::string_view type, const std::vector<int64_t>& dims) {
  return absl::StrCat(std::string(type), "[", absl::StrJoin(dims, ","), "]");
}

}  // namespace neuron::tensorfile
