// Runs an ExprProgram over whole tensors: tiles of ExprProgram::kTile
// elements are loaded (converted to the compute domain, splatted or
// gathered for broadcasts), evaluated and stored, so intermediate values
// never leave the cache. Large tensors are split across the host threads.
// Programs on f32, bf16 and f16 values take the f32 tile runner instead
// (f32_tiles.h): AVX-512 where the CPU has it, AVX2 elsewhere.
#ifndef NEURON_LIB_KERNELS_ELEMENTWISE_KERNEL_H_
#define NEURON_LIB_KERNELS_ELEMENTWISE_KERNEL_H_

#include <memory>
#include <optional>
#include <vector>

#include "lib/kernels/buffer.h"
#include "lib/kernels/expr_program.h"
#include "lib/kernels/f32_tiles.h"

namespace neuron::kernels {

class ElementwiseKernel {
 public:
  // Which evaluator runs the program where the f32 tile runner can: the
  // widest runner, one of them, or the general interpreter (tests compare
  // them).
  enum class Runner : uint8_t { kBestTiles, kAvx2Tiles, kAvx512Tiles, kInterpreter };
  explicit ElementwiseKernel(ExprProgram program, Runner runner = Runner::kBestTiles);

  // params: the program's parameters by number; outs: one per output.
  void Run(const std::vector<const Buf*>& params, const std::vector<Buf*>& outs,
           const ExprRunContext& ctx, int threads);

  // Lanes [begin, end) of a one-output program into `out`, whose data
  // holds lane `begin` first (a slice of the whole), on the calling
  // thread with the state of `slot` (0 or 1: two slices may run at once on
  // different slots). `out.bytes` should be the slice's: a small slice is
  // written through the cache, for its reader to find there.
  void RunSlice(int slot, const std::vector<const Buf*>& params, Buf& out, int64_t begin,
                int64_t end, const ExprRunContext& ctx);

  const ExprProgram& program() const { return program_; }
  bool uses_f32_tiles() const { return f32_plan_.has_value(); }

 private:
  struct ThreadState {
    ExprScratch scratch;
    std::vector<std::vector<uint64_t>> tiles;  // per input
    std::vector<uint8_t> gather;               // raw bytes for mapped inputs
    std::vector<const void*> in_ptrs;
    std::vector<const void*> out_regs;
    std::vector<int8_t> nonfinite;  // per output, seen in this range
    // The f32 tile runner's slots and per-range pointers.
    std::vector<float> f32_scratch;
    std::vector<const void*> f32_streams;
    std::vector<float> f32_scalars;
    std::vector<void*> f32_dsts;
  };
  // Lanes [begin, end); each output's data holds lane `origin` first.
  void RunRange(ThreadState& ts, int64_t begin, int64_t end,
                const std::vector<const Buf*>& params, const std::vector<Buf*>& outs,
                const ExprRunContext& ctx, int64_t origin = 0);
  void RunRangeF32(ThreadState& ts, int64_t begin, int64_t end,
                   const std::vector<const Buf*>& params, const std::vector<Buf*>& outs,
                   int64_t origin);
  // f32 -> bf16/f16 converts: one pass from storage to storage.
  void RunRangeNarrowing(ThreadState& ts, int64_t begin, int64_t end,
                         const std::vector<const Buf*>& params, const std::vector<Buf*>& outs,
                         int64_t origin);

  ExprProgram program_;
  std::optional<F32Plan> f32_plan_;
  F32TilesIsa isa_ = F32TilesIsa::kAvx2;  // the runner of f32_plan_
  bool narrowing_convert_ = false;  // see RunRangeNarrowing
  std::vector<ThreadState> threads_;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_ELEMENTWISE_KERNEL_H_
