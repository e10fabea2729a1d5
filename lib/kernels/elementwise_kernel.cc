#include "lib/kernels/elementwise_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "lib/kernels/element_convert.h"
#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {
namespace {

// Below this many elements a second thread costs more than it saves.
constexpr int64_t kParallelThreshold = 1 << 16;

// Outputs bigger than this bypass the cache on store (no read-for-ownership
// of lines that will be fully overwritten).
constexpr int64_t kStreamingBytes = 8 << 20;

// Stores f32 lanes with non-temporal stores; dst must be 32-byte aligned.
void StreamF32(const float* src, int64_t n, float* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}

bool AnyNonFiniteF32(const float* v, int64_t n) {
  uint32_t bad = 0;
  const uint32_t* u = reinterpret_cast<const uint32_t*>(v);
  for (int64_t i = 0; i < n; ++i) bad |= (~u[i] & 0x7f800000u) == 0;
  return bad != 0;
}

bool StorageIsDomain(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kF64 || t == ElementType::kS64 ||
         t == ElementType::kU64 || t == ElementType::kC64 || t == ElementType::kC128;
}

// Copies lanes of a mapped (broadcast, transposed) input into g, walking
// the output index from idx/off. kBytes > 0 fixes the element size so
// each copy is one move, not a memcpy call: bias broadcasts of bf16
// models spent more time in those calls than in the copying.
template <int kBytes>
void GatherLanes(uint8_t* g, const uint8_t* src, int64_t n, int64_t off,
                 std::vector<int64_t>& idx, const ExprInput& in, int es = kBytes) {
  const int64_t r = static_cast<int64_t>(in.out_dims.size());
  for (int64_t l = 0; l < n; ++l) {
    if constexpr (kBytes > 0) std::memcpy(g + l * kBytes, src + off * kBytes, kBytes);
    else std::memcpy(g + l * es, src + off * es, es);
    for (int64_t d = r - 1; d >= 0; --d) {
      off += in.src_strides[d];
      if (++idx[d] < in.out_dims[d]) break;
      off -= in.src_strides[d] * in.out_dims[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

ElementwiseKernel::ElementwiseKernel(ExprProgram program, Runner runner)
    : program_(std::move(program)) {
  const bool avx512 = F32TilesAvx512Available();
  if (runner == Runner::kBestTiles || runner == Runner::kAvx2Tiles ||
      (runner == Runner::kAvx512Tiles && avx512)) {
    f32_plan_ = program_.LowerToF32();
    isa_ = runner == Runner::kAvx2Tiles ? F32TilesIsa::kAvx2 : BestF32TilesIsa();
  }
  // The converts --auto-cast puts before bf16/f16 dots: storage to storage
  // in one pass instead of tiles of load, convert, round and store.
  const ElementType out0 = program_.output_types().empty() ? ElementType::kInvalid
                                                           : program_.output_types()[0];
  narrowing_convert_ = program_.IsPlainConvert() &&
                       program_.inputs()[0].type == ElementType::kF32 &&
                       (out0 == ElementType::kBF16 || out0 == ElementType::kF16);
  threads_.resize(2);
  for (auto& ts : threads_) {
    ts.scratch = program_.MakeScratch();
    ts.tiles.assign(program_.inputs().size(), std::vector<uint64_t>(ExprProgram::kTile * 2));
    ts.gather.resize(ExprProgram::kTile * 16);
    ts.in_ptrs.resize(program_.inputs().size());
    ts.out_regs.resize(program_.output_types().size());
    if (f32_plan_) {
      // Slots and tail tiles, plus room to start on a 64-byte boundary.
      ts.f32_scratch.resize((f32_plan_->slot_count + f32_plan_->stream_inputs.size()) *
                                kF32TileLanes + 16);
      ts.f32_streams.resize(f32_plan_->stream_inputs.size());
      ts.f32_scalars = f32_plan_->scalars;
      ts.f32_dsts.resize(f32_plan_->outputs.size());
    }
  }
}

void ElementwiseKernel::RunRangeF32(ThreadState& ts, int64_t begin, int64_t end,
                                    const std::vector<const Buf*>& params,
                                    const std::vector<Buf*>& outs, int64_t origin) {
  const F32Plan& plan = *f32_plan_;
  const auto& inputs = program_.inputs();
  auto source = [&](int input) -> const uint8_t* {
    const ExprInput& in = inputs[input];
    return in.parameter >= 0 ? params[in.parameter]->data : in.constant.data();
  };
  for (size_t s = 0; s < plan.stream_inputs.size(); ++s)
    ts.f32_streams[s] = source(plan.stream_inputs[s]);
  for (size_t i = 0; i < plan.scalar_inputs.size(); ++i)
    if (plan.scalar_inputs[i] >= 0)
      LoadToDomain(inputs[plan.scalar_inputs[i]].type, source(plan.scalar_inputs[i]), 1,
                   &ts.f32_scalars[i]);
  bool streaming = true;
  for (size_t j = 0; j < outs.size(); ++j) {
    ts.f32_dsts[j] = outs[j]->data + (begin - origin) * outs[j]->elem_size;
    streaming = streaming && outs[j]->bytes >= kStreamingBytes &&
                reinterpret_cast<uintptr_t>(ts.f32_dsts[j]) % 64 == 0;
  }
  ts.nonfinite.assign(outs.size(), 0);
  F32TileJob job;
  job.steps = plan.steps.data();
  job.step_count = static_cast<int32_t>(plan.steps.size());
  job.outputs = plan.outputs.data();
  job.output_count = static_cast<int32_t>(plan.outputs.size());
  job.slot_count = plan.slot_count;
  job.stream_count = static_cast<int32_t>(plan.stream_inputs.size());
  job.streams = ts.f32_streams.data();
  job.stream_storage = plan.stream_storage.data();
  job.output_storage = plan.output_storage.data();
  job.stream_maps = plan.stream_maps.data();
  job.first_lane = begin;
  job.scalars = ts.f32_scalars.data();
  job.dsts = ts.f32_dsts.data();
  job.count = end - begin;
  const uintptr_t raw = reinterpret_cast<uintptr_t>(ts.f32_scratch.data());
  job.scratch = ts.f32_scratch.data() + ((64 - raw % 64) % 64) / sizeof(float);
  job.streaming_stores = streaming;
  job.nonfinite = reinterpret_cast<uint8_t*>(ts.nonfinite.data());
  RunF32Tiles(isa_, job);
}

void ElementwiseKernel::RunRangeNarrowing(ThreadState& ts, int64_t begin, int64_t end,
                                          const std::vector<const Buf*>& params,
                                          const std::vector<Buf*>& outs, int64_t origin) {
  const ExprInput& in = program_.inputs()[0];
  const float* src = reinterpret_cast<const float*>(
      in.parameter >= 0 ? params[in.parameter]->data : in.constant.data());
  Buf& o = *outs[0];
  uint16_t* dst = reinterpret_cast<uint16_t*>(o.data);  // lane t at dst[t - origin]
  // Rounding may overflow to inf: the exponent field of the result tells.
  const uint16_t exp_mask = o.type == ElementType::kBF16 ? 0x7f80 : 0x7c00;
  constexpr int64_t kBlock = 4096;  // stays in L1 for the check
  uint16_t bad = 0;
  for (int64_t t = begin; t < end; t += kBlock) {
    const int64_t n = std::min(kBlock, end - t);
    uint16_t* d = dst + (t - origin);
    StoreFromDomain(o.type, src + t, n, reinterpret_cast<uint8_t*>(d));
    for (int64_t i = 0; i < n; ++i) bad |= static_cast<uint16_t>((d[i] & exp_mask) == exp_mask);
  }
  ts.nonfinite.assign(1, bad != 0);
}

void ElementwiseKernel::RunRange(ThreadState& ts, int64_t begin, int64_t end,
                                 const std::vector<const Buf*>& params,
                                 const std::vector<Buf*>& outs, const ExprRunContext& ctx,
                                 int64_t origin) {
  // Stochastic rounding draws per lane in the interpreter's converts.
  if (f32_plan_ && !(ctx.stochastic_rounding && f32_plan_->rounds_converts)) {
    RunRangeF32(ts, begin, end, params, outs, origin);
    return;
  }
  if (narrowing_convert_ && !ctx.stochastic_rounding) {
    RunRangeNarrowing(ts, begin, end, params, outs, origin);
    return;
  }
  const auto& inputs = program_.inputs();
  ts.nonfinite.assign(outs.size(), 0);
  const int64_t first_n = std::min<int64_t>(ExprProgram::kTile, end - begin);
  // Splat inputs: one value for every lane, filled once per range.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ExprInput& in = inputs[i];
    if (in.mode != InputMode::kSplat) continue;
    const uint8_t* src = in.parameter >= 0 ? params[in.parameter]->data : in.constant.data();
    void* tile = ts.tiles[i].data();
    LoadToDomain(in.type, src, 1, tile);
    const int lane = DomainBytes(DomainOf(in.type));
    uint8_t* b = static_cast<uint8_t*>(tile);
    for (int64_t l = 1; l < first_n; ++l) std::memcpy(b + l * lane, b, lane);
    ts.in_ptrs[i] = tile;
  }
  std::vector<int64_t> idx;
  for (int64_t t = begin; t < end; t += ExprProgram::kTile) {
    const int64_t n = std::min<int64_t>(ExprProgram::kTile, end - t);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ExprInput& in = inputs[i];
      const uint8_t* src = in.parameter >= 0 ? params[in.parameter]->data : in.constant.data();
      const int es = hlo::StorageBytes(in.type);
      if (in.mode == InputMode::kFull) {
        if (StorageIsDomain(in.type)) {
          ts.in_ptrs[i] = src + t * es;
        } else {
          LoadToDomain(in.type, src + t * es, n, ts.tiles[i].data());
          ts.in_ptrs[i] = ts.tiles[i].data();
        }
      } else if (in.mode == InputMode::kMapped) {
        // Walk the output multi-index of lanes t..t+n, gathering raw bytes.
        const int64_t r = static_cast<int64_t>(in.out_dims.size());
        idx.assign(r, 0);
        int64_t rem = t;
        for (int64_t d = r - 1; d >= 0; --d) { idx[d] = rem % in.out_dims[d]; rem /= in.out_dims[d]; }
        int64_t off = 0;
        for (int64_t d = 0; d < r; ++d) off += idx[d] * in.src_strides[d];
        uint8_t* g = ts.gather.data();
        switch (es) {
          case 2: GatherLanes<2>(g, src, n, off, idx, in); break;
          case 4: GatherLanes<4>(g, src, n, off, idx, in); break;
          case 8: GatherLanes<8>(g, src, n, off, idx, in); break;
          default: GatherLanes<0>(g, src, n, off, idx, in, es); break;
        }
        LoadToDomain(in.type, g, n, ts.tiles[i].data());
        ts.in_ptrs[i] = ts.tiles[i].data();
      }
    }
    program_.Eval(ts.in_ptrs.data(), n, t, ts.scratch, ctx, ts.out_regs.data());
    for (size_t j = 0; j < outs.size(); ++j) {
      Buf& o = *outs[j];
      uint8_t* dst = o.data + (t - origin) * o.elem_size;
      const bool f32 = o.type == ElementType::kF32;
      if (f32 && o.bytes >= kStreamingBytes && reinterpret_cast<uintptr_t>(dst) % 32 == 0)
        StreamF32(static_cast<const float*>(ts.out_regs[j]), n, reinterpret_cast<float*>(dst));
      else
        StoreFromDomain(o.type, ts.out_regs[j], n, dst);
      // NaN/Inf check while the tile is in cache (narrow floats are exact
      // in f32, so the register tells).
      if (DomainOf(o.type) == Domain::kF32 && AnyNonFiniteF32(static_cast<const float*>(ts.out_regs[j]), n))
        ts.nonfinite[j] = 1;
    }
  }
  _mm_sfence();  // streaming stores visible before the range counts as done
}

void ElementwiseKernel::RunSlice(int slot, const std::vector<const Buf*>& params, Buf& out,
                                 int64_t begin, int64_t end, const ExprRunContext& ctx) {
  std::vector<Buf*> outs = {&out};
  RunRange(threads_[static_cast<size_t>(slot)], begin, end, params, outs, ctx, begin);
}

void ElementwiseKernel::Run(const std::vector<const Buf*>& params, const std::vector<Buf*>& outs,
                            const ExprRunContext& ctx, int threads) {
  const int64_t total = outs.empty() ? 0 : outs[0]->count;
  for (Buf* o : outs) o->nonfinite = -1;
  if (total == 0) return;
  threads_[1].nonfinite.assign(outs.size(), 0);
  if (threads < 2 || total < kParallelThreshold) {
    RunRange(threads_[0], 0, total, params, outs, ctx);
  } else {
    // Two halves on tile boundaries.
    int64_t tiles = (total + ExprProgram::kTile - 1) / ExprProgram::kTile;
    int64_t mid = std::min(total, (tiles / 2) * ExprProgram::kTile);
    ThreadPool::Global().Run(2, [&](int part) {
      if (part == 0) RunRange(threads_[0], 0, mid, params, outs, ctx);
      else RunRange(threads_[1], mid, total, params, outs, ctx);
    });
  }
  for (size_t j = 0; j < outs.size(); ++j)
    if (DomainOf(outs[j]->type) == Domain::kF32)
      outs[j]->nonfinite = threads_[0].nonfinite[j] | threads_[1].nonfinite[j];
}

}  // namespace neuron::kernels
