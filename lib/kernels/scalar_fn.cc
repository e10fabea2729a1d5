#include "lib/kernels/scalar_fn.h"

#include <cstring>

namespace neuron::kernels {

absl::StatusOr<ScalarFn> ScalarFn::Compile(const hlo::Computation& comp) {
  return Build(comp, /*widen_narrow_floats=*/false);
}

absl::StatusOr<ScalarFn> ScalarFn::CompileReducer(const hlo::Computation& comp) {
  return Build(comp, /*widen_narrow_floats=*/true);
}

absl::StatusOr<ScalarFn> ScalarFn::Build(const hlo::Computation& comp, bool widen_narrow_floats) {
  absl::StatusOr<ExprProgram> p = ExprProgram::Compile(comp, /*lanes_mode=*/true);
  if (!p.ok()) return p.status();
  // A program that cannot be widened keeps its per-step rounding.
  if (widen_narrow_floats) p->WidenNarrowFloats();
  for (const hlo::Instruction* prm : comp.parameters())
    if (prm && prm->shape().type == hlo::ElementType::kC128)
      return absl::UnimplementedError("c128 values in a reducer or comparator");
  if (comp.root() && (comp.root()->shape().type == hlo::ElementType::kC128 ||
                      (comp.root()->shape().IsTuple() && [&] {
                        for (const auto& e : comp.root()->shape().tuple)
                          if (e.type == hlo::ElementType::kC128) return true;
                        return false;
                      }())))
    return absl::UnimplementedError("c128 values in a reducer or comparator");
  ScalarFn f;
  f.program_ = std::make_unique<ExprProgram>(std::move(*p));
  f.param_count_ = static_cast<int>(comp.parameters().size());
  f.in_tiles_.resize(f.program_->inputs().size());
  f.scratch_ = f.program_->MakeScratch();
  return f;
}

void ScalarFn::EvalLanes(const void* const* params, int64_t n, const void** out) {
  const auto& inputs = program_->inputs();
  for (size_t i = 0; i < inputs.size(); ++i) in_tiles_[i] = params[inputs[i].parameter];
  ExprRunContext ctx;
  program_->Eval(in_tiles_.data(), n, 0, scratch_, ctx, out);
}

void ScalarFn::EvalScalar(const uint64_t* params, uint64_t* out) {
  const void* ptrs[64];
  const void* outs[64];
  for (int p = 0; p < param_count_ && p < 64; ++p) ptrs[p] = &params[p];
  EvalLanes(ptrs, 1, outs);
  const auto& types = program_->output_types();
  for (size_t j = 0; j < types.size(); ++j) {
    out[j] = 0;
    std::memcpy(&out[j], outs[j], DomainOf(types[j]) == Domain::kF32 ? 4 : 8);
  }
}

uint64_t LoadSlot(ElementType type, const uint8_t* base, int64_t i) {
  uint64_t slot = 0;
  LoadToDomain(type, base + i * hlo::StorageBytes(type), 1, &slot);
  return slot;
}

void StoreSlot(ElementType type, uint8_t* base, int64_t i, uint64_t slot) {
  StoreFromDomain(type, &slot, 1, base + i * hlo::StorageBytes(type));
}

}  // namespace neuron::kernels
