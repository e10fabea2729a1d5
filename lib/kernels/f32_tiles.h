// The f32 fast path of the elementwise interpreter: a program whose every
// value is f32, bf16 or f16 is flattened into f32 steps (bf16/f16 values
// rounded after each step that can leave their grid, as the interpreter
// does; loaded and stored in their own format at the edges), and a runner built for one
// instruction set (AVX-512, or AVX2 where the CPU has no AVX-512)
// evaluates whole ranges a block of lanes at a time. Each
// step's result stays in vector registers for the step after it; only
// values read later on go through a slot in L1, and constants live in
// registers.
//
// This header is plain data on purpose: the AVX-512 runner's translation
// unit is compiled for AVX-512, and any inline function or template it shared with
// the rest of the program could be emitted there with AVX-512 instructions
// and picked by the linker for callers on machines without it.
#ifndef NEURON_LIB_KERNELS_F32_TILES_H_
#define NEURON_LIB_KERNELS_F32_TILES_H_

#include <cstdint>

namespace neuron::kernels {

// Lanes per tile: 16 AVX-512 vectors (32 AVX2 ones), 1 KiB per slot.
inline constexpr int64_t kF32TileLanes = 256;

enum class F32Op : uint8_t {
  // Binary ops first (through kLastBinaryF32Op).
  kAdd, kSubtract, kMultiply, kDivide, kMaximum, kMinimum,
  // Comparisons give a lane mask (all bits set where true, as the vector
  // compares do; IEEE: only "not equal" holds with a NaN), and the bitwise
  // ops combine masks and select with them (kAndNotBits: ~a & b).
  kCompareEq, kCompareNe, kCompareLt, kCompareLe, kCompareGt, kCompareGe,
  kAndBits, kAndNotBits, kOrBits, kXorBits,
  // Unary.
  kNegate, kAbs, kSqrt, kRsqrt, kExp, kTanh, kLogistic, kLog,
  kFloor, kCeil, kRoundNearestEven,
  kRoundBF16, kRoundF16,  // to the nearest bf16/f16 value, ties to even
};
inline constexpr F32Op kLastBinaryF32Op = F32Op::kXorBits;

// How an input stream or an output is stored; the steps see f32 lanes.
enum class TileStorage : uint8_t { kF32, kBF16, kF16 };

// How the output's lanes map onto an input stream's elements. Lane i (of
// the whole output; a range starts at its first_lane) reads element
// (i / repeat) % period, or element i when period is 0 (a whole array); where
// outer_period is not 0 (a broadcast across middle dims: one rotary table
// for every head), ((i / outer_repeat) % outer_period) * period is added.
struct StreamMap {
  int64_t period = 0, repeat = 1, outer_period = 0, outer_repeat = 1;
};

struct F32Operand {
  // kAcc: the previous step's result, in registers.
  enum Kind : uint8_t { kAcc, kSlot, kStream, kScalar };
  Kind kind = kAcc;
  int32_t index = 0;  // slot number, input stream, or scalar index
};

struct F32Step {
  F32Op op = F32Op::kAdd;
  F32Operand a, b;     // b unused by unary ops
  bool spill = false;  // also store the result to slot dst
  int32_t dst = 0;
};

// One range of lanes for the runner. Output pointers are already offset
// to the range's first lane; input streams start at their first element.
struct F32TileJob {
  const F32Step* steps = nullptr;
  int32_t step_count = 0;
  const F32Operand* outputs = nullptr;  // kAcc: the last step's result
  int32_t output_count = 0;
  int32_t slot_count = 0;
  int32_t stream_count = 0;
  // Per input stream: its first element, and how lanes map onto it.
  const void* const* streams = nullptr;
  const TileStorage* stream_storage = nullptr;
  const StreamMap* stream_maps = nullptr;
  int64_t first_lane = 0;
  const float* scalars = nullptr;         // scalar operand values
  void* const* dsts = nullptr;            // per output, at first_lane
  const TileStorage* output_storage = nullptr;
  int64_t count = 0;                      // lanes in the range
  // (slot_count + stream_count) * kF32TileLanes floats, 64-byte aligned.
  // Narrow streams are widened into their tile there.
  float* scratch = nullptr;
  bool streaming_stores = false;  // non-temporal stores for big outputs
  uint8_t* nonfinite = nullptr;   // per output: set to 1 on a NaN/Inf
};

// The instruction sets there are runners for. AVX2 (with FMA and F16C)
// is the build's baseline, so its runner runs everywhere the library does.
enum class F32TilesIsa : uint8_t { kAvx2, kAvx512 };

// True when this CPU and OS can run the AVX-512 runner.
bool F32TilesAvx512Available();
// The widest runner this CPU can run.
F32TilesIsa BestF32TilesIsa();

// Evaluates the job's range on the runner for `isa` (kAvx512 only where
// F32TilesAvx512Available()). Both give the same bits.
void RunF32Tiles(F32TilesIsa isa, const F32TileJob& job);
void RunF32TilesAvx512(const F32TileJob& job);
void RunF32TilesAvx2(const F32TileJob& job);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_F32_TILES_H_
