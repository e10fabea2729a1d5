// Element types as tensor files spell them: NumPy descriptors in .npy and
// .npz ("<f4", "|b1", "|V2") and safetensors' names ("F32", "BF16",
// "F8_E4M3"). Types NumPy lacks (bf16, fp8) arrive in .npy as raw bits: an
// unsigned integer ("<u2", "|u1") or void ("|V2", "|V1") of the same width,
// typed by the parameter they are bound to.
#ifndef NEURON_LIB_TENSORFILE_DTYPE_H_
#define NEURON_LIB_TENSORFILE_DTYPE_H_

#include <optional>
#include <string>
#include <string_view>

#include "lib/hlo/shape.h"

namespace neuron::tensorfile {

struct StoredType {
  std::string spelled;  // as the file writes it
  // kInvalid for raw bytes (NumPy void): they take the type they bind to.
  hlo::ElementType type = hlo::ElementType::kInvalid;
  int item_bytes = 0;
};

// A little-endian or byte-order-free NumPy descriptor; nullopt for the
// rest (big-endian, strings, objects, structured types).
std::optional<StoredType> FromNpyDescr(std::string_view descr);
// The descriptor `type` is written as: its own where NumPy has it, else
// its raw bits as an unsigned integer ("<u2" for bf16, "|u1" for fp8).
std::string NpyDescrOf(hlo::ElementType type);

// safetensors' dtype names (BOOL, U8..U64, I8..I64, F16, BF16, F32, F64,
// F8_E4M3, F8_E5M2); nullopt for the rest.
std::optional<StoredType> FromSafetensorsName(std::string_view name);
// "" where safetensors has no name for `type`.
std::string SafetensorsNameOf(hlo::ElementType type);

// Whether an array stored as `stored` holds values of `type` exactly: the
// same type, or raw bits of the same width for a type NumPy lacks (bf16,
// f16, fp8 from an unsigned integer or void array).
bool HoldsType(const StoredType& stored, hlo::ElementType type);

// "bf16[2,3]"-like text of a type and dims, for messages.
std::string DescribeArray(std::string_view type, const std::vector<int64_t>& dims);

}  // namespace neuron::tensorfile

#endif  // NEURON_LIB_TENSORFILE_DTYPE_H_
