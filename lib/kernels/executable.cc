#include "lib/kernels/executable.h"


#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/kernels/aligned_bytes.h"
#include "lib/kernels/gemm.h"
#include "lib/kernels/plan.h"
#include "lib/hlo/input_output_alias.h"

namespace neuron::kernels {
namespace {

class AlignedHostAllocator : public BufferAllocator {
 public:
  void* Allocate(size_t bytes) override {
    // Large buffers on huge pages, so their first touch faults once per
    // 2 MiB rather than per 4 KiB.
    if (bytes >= size_t{4} << 20) return AllocateOnHugePages(bytes);
    size_t rounded = (bytes + 63) / 64 * 64;
    return std::aligned_alloc(64, rounded ? rounded : 64);
  }
  void Free(void* ptr, size_t) override { std::free(ptr); }
};

// Flat leaf positions of a shape index (depth-first, arrays only).
std::optional<size_t> LeafPosition(const hlo::Shape& shape, const std::vector<int64_t>& index) {
  size_t first = 0;
  const hlo::Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= static_cast<int64_t>(s->tuple.size())) return std::nullopt;
    for (int64_t k = 0; k < i; ++k) first += static_cast<size_t>(LeafCount(s->tuple[k]));
    s = &s->tuple[i];
  }
  if (!s->IsArray()) return std::nullopt;
  return first;
}

std::vector<std::pair<size_t, size_t>> AliasesNeedingCopies(const hlo::Module& module) {
  std::vector<std::pair<size_t, size_t>> out;
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) return out;
  for (const hlo::InputOutputAlias& a : module.config().input_output_alias) {
    if (hlo::AliasRunsInPlace(*entry, a)) continue;
    const std::optional<size_t> output = LeafPosition(entry->root()->shape(), a.output_index);
    size_t first_input = 0;
    for (size_t p = 0; p < entry->parameters().size() && p < static_cast<size_t>(a.parameter); ++p)
      first_input += static_cast<size_t>(LeafCount(entry->parameter(p)->shape()));
    const hlo::Instruction* param = a.parameter < static_cast<int64_t>(entry->parameters().size())
                                        ? entry->parameter(static_cast<size_t>(a.parameter))
                                        : nullptr;
    if (param == nullptr || !output) continue;
    const std::optional<size_t> input = LeafPosition(param->shape(), a.parameter_index);
    if (input) out.push_back({*output, first_input + *input});
  }
  return out;
}

}  // namespace

struct Executable::Impl {
  AlignedHostAllocator default_allocator;
  BufferAllocator* allocator = nullptr;
  std::deque<Buf> bufs;
  std::vector<std::pair<void*, size_t>> allocations;
  std::unique_ptr<Planner> planner;
  CompPlan* entry = nullptr;
  std::vector<Buf*> input_leaves;
  std::vector<Tensor> input_specs, output_specs;
  std::vector<bool> root_direct;  // result leaf may be written in place
  std::vector<int> passed_through;  // per result leaf: the input leaf it is, or -1
  // input_output_alias pairs (output leaf, input leaf) that cannot run in
  // one buffer (hlo::AliasRunsInPlace): given one, the input is copied
  // first, as the SDK's runtime copies an input it cannot donate.
  std::vector<std::pair<size_t, size_t>> alias_needs_copy;
  ScratchArena scratch;  // the kernels' scratch, one step at a time
  MemoryUsage memory;

  ~Impl() {
    planner.reset();
    for (auto& [p, n] : allocations) allocator->Free(p, n);
  }
};

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Build(const hlo::Module& module,
                                                              const BuildOptions& options) {
  if (module.entry() == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("module '", module.name(), "' has no entry computation"));
  auto impl = std::make_unique<Impl>();
  impl->allocator = options.allocator ? options.allocator : &impl->default_allocator;
  impl->planner = std::make_unique<Planner>(impl->allocator, &impl->bufs, &impl->allocations);
  impl->planner->set_external_constants(options.external_constant);
  absl::StatusOr<CompPlan*> entry = impl->planner->Plan(*module.entry());
  if (!entry.ok()) {
    return absl::Status(entry.status().code(),
                        absl::StrCat(module.name(), ": ", entry.status().message()));
  }
  if (absl::Status s = impl->planner->CommitBuffers(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(module.name(), ": ", s.message()));
  }
  impl->entry = *entry;
  for (const auto& param : impl->entry->params)
    for (Buf* b : param) {
      impl->input_leaves.push_back(b);
      impl->input_specs.push_back(Tensor::Borrow(b->type, b->dims, nullptr));
      impl->memory.inputs += b->bytes;
    }
  std::vector<Buf*>& root = impl->entry->root;
  for (Buf* b : root) {
    impl->output_specs.push_back(Tensor::Borrow(b->type, b->dims, nullptr));
    impl->memory.outputs += b->bytes;
  }
  impl->root_direct = DirectRoots(root);
  for (Buf* b : root) {
    auto it = std::find(impl->input_leaves.begin(), impl->input_leaves.end(), b);
    impl->passed_through.push_back(it == impl->input_leaves.end()
                                       ? -1
                                       : static_cast<int>(it - impl->input_leaves.begin()));
  }
  impl->alias_needs_copy = AliasesNeedingCopies(module);
  impl->memory.constants = impl->planner->constant_bytes();
  impl->memory.intermediates = impl->planner->owned_bytes();
  impl->memory.workspace = static_cast<int64_t>(impl->planner->workspace_bytes());
  impl->scratch.Plan(impl->planner->workspace_bytes());
  return std::unique_ptr<Executable>(new Executable(std::move(impl)));
}

const std::vector<Tensor>& Executable::input_specs() const { return impl_->input_specs; }
const std::vector<Tensor>& Executable::output_specs() const { return impl_->output_specs; }
MemoryUsage Executable::memory() const { return impl_->memory; }
int Executable::PassedThroughInput(size_t output) const {
  return output < impl_->passed_through.size() ? impl_->passed_through[output] : -1;
}

absl::Status Executable::Run(std::span<const Tensor> inputs, std::vector<Tensor>* outputs,
                             const ExecOptions& options, RunStats* stats) {
  Impl& im = *impl_;
  if (inputs.size() != im.input_leaves.size())
    return absl::InvalidArgumentError(absl::StrCat("expected ", im.input_leaves.size(),
                                                   " inputs, got ", inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    Buf* b = im.input_leaves[i];
    if (inputs[i].type() != b->type || inputs[i].dims() != b->dims)
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, ": expected ", im.input_specs[i].ShapeString(), ", got ",
          inputs[i].ShapeString()));
    b->data = const_cast<uint8_t*>(inputs[i].data());
    b->version = i < options.input_versions.size() ? options.input_versions[i] : 0;
  }
  // An aliased output given its input's own buffer where the two cannot
  // share it: the input is read from a copy.
  std::vector<std::vector<uint8_t>> input_copies;
  for (const auto& [out, in] : im.alias_needs_copy) {
    if (out >= outputs->size() || in >= inputs.size()) continue;
    if ((*outputs)[out].data() == nullptr || (*outputs)[out].data() != inputs[in].data()) continue;
    Buf* b = im.input_leaves[in];
    input_copies.emplace_back(inputs[in].data(), inputs[in].data() + b->bytes);
    b->data = input_copies.back().data();
    b->version = 0;  // a fresh copy each run
  }
  const std::vector<Buf*>& root = im.entry->root;
  outputs->resize(root.size());
  std::vector<uint8_t*> saved(root.size(), nullptr);
  for (size_t i = 0; i < root.size(); ++i) {
    Tensor& t = (*outputs)[i];
    if (t.type() != root[i]->type || t.dims() != root[i]->dims || t.data() == nullptr)
      t = Tensor(root[i]->type, root[i]->dims);
    if (im.root_direct[i]) {
      saved[i] = root[i]->data;
      root[i]->data = t.data();
    }
  }
  RunStats local_stats;
  RunCtx ctx;
  ctx.opts = &options;
  ctx.stats = stats ? stats : &local_stats;
  *ctx.stats = RunStats();
  ctx.expr.stochastic_rounding = options.stochastic_rounding;
  ctx.expr.seed = options.sr_seed;
  ctx.check_time = options.cancel != nullptr || options.deadline.has_value();
  ctx.scratch = &im.scratch;
  SetGemmThreads(std::max(1, options.threads));
  absl::Status status = ctx.check_time ? ctx.Check() : absl::OkStatus();
  if (status.ok()) status = RunPlan(*im.entry, ctx);
  for (size_t i = 0; i < root.size(); ++i)
    if (im.root_direct[i]) root[i]->data = saved[i];
  if (!status.ok()) return status;
  for (size_t i = 0; i < root.size(); ++i) {
    Tensor& t = (*outputs)[i];
    if (!im.root_direct[i] && root[i]->bytes && t.data() != root[i]->data)
      std::memcpy(t.data(), root[i]->data, root[i]->bytes);
    if (ctx.stats->has_nonfinite) continue;
    if (root[i]->nonfinite >= 0) {  // tracked by the producer
      ctx.stats->has_nonfinite = root[i]->nonfinite > 0;
      continue;
    }
    Buf view = *root[i];
    view.data = t.data();
    if (HasNonFinite(view)) ctx.stats->has_nonfinite = true;
  }
  return absl::OkStatus();
}

}  // namespace neuron::kernels
