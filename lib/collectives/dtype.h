// Element types and reductions the collectives engine moves and combines.
// The reduction kernels are the hot loop of every all-reduce: they are
// written so the compiler vectorises them (AVX2 on x86-64-v3).
#ifndef NEURON_LIB_COLLECTIVES_DTYPE_H_
#define NEURON_LIB_COLLECTIVES_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace neuron::collectives {

enum class DataType {
  kU8, kS8, kU16, kS16, kU32, kS32, kU64, kS64, kF16, kBF16, kF32, kF64,
};
inline constexpr DataType kAllDataTypes[] = {
    DataType::kU8,  DataType::kS8,  DataType::kU16, DataType::kS16,
    DataType::kU32, DataType::kS32, DataType::kU64, DataType::kS64,
    DataType::kF16, DataType::kBF16, DataType::kF32, DataType::kF64};

enum class ReduceOp { kSum, kProd, kMax, kMin };
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::kSum, ReduceOp::kProd,
                                             ReduceOp::kMax, ReduceOp::kMin};

size_t DataTypeSize(DataType type);
// nccom-test's names: uint8 int8 uint16 int16 uint32 int32 uint64 int64 fp16
// bf16 fp32 fp64.
const char* DataTypeName(DataType type);
// Accepts those names and common aliases (u8, s32, f32, float, half, ...).
std::optional<DataType> ParseDataType(std::string_view text);
// NumPy descriptor for .npy files ("<f4"; bf16 as "<u2" bit patterns).
const char* DataTypeNpyDescr(DataType type);
bool IsFloat(DataType type);

const char* ReduceOpName(ReduceOp op);  // sum prod max min
std::optional<ReduceOp> ParseReduceOp(std::string_view text);

// dst[i] = dst[i] OP src[i] for count elements (dst and src may not overlap).
void ReduceInto(void* dst, const void* src, size_t count, DataType type,
                ReduceOp op);
// dst[i] = a[i] OP b[i]; dst may equal a.
void Reduce2(void* dst, const void* a, const void* b, size_t count,
             DataType type, ReduceOp op);

// Scalar conversions used by checks and tests.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float BF16ToFloat(uint16_t h);
uint16_t FloatToBF16(float f);

// Element i of a buffer as double, and storing a double (rounded to the
// type), for building inputs and expected results.
double LoadAsDouble(const void* data, size_t i, DataType type);
void StoreFromDouble(void* data, size_t i, DataType type, double value);

}  // namespace neuron::collectives

#endif  // NEURON_LIB_COLLECTIVES_DTYPE_H_
