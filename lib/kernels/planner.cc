// Builds the steps of every computation: one pre-bound kernel per
// instruction, aliases (reshape, get-tuple-element, tuple...) resolved
// without copying, buffers allocated once.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/kernels/data_movement.h"
#include "lib/kernels/device_print.h"
#include "lib/kernels/dot_conv.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/elementwise_kernel.h"
#include "lib/kernels/fused_reduce.h"
#include "lib/kernels/fft.h"
#include "lib/kernels/support.h"
#include "lib/kernels/thread_pool.h"
#include "lib/kernels/gather_scatter.h"
#include "lib/kernels/plan.h"
#include "lib/kernels/reduce_ops.h"
#include "lib/kernels/window_ops.h"
#include "lib/kernels/rng.h"
#include "lib/kernels/sort_ops.h"
#include "lib/kernels/batch_norm.h"
#include "lib/kernels/custom_calls.h"
#include "lib/kernels/linear_algebra.h"
#include "lib/kernels/ragged_all_to_all.h"
#include "lib/kernels/ragged_dot.h"
#include "lib/kernels/scalar_fn.h"
#include "lib/support/host_memory.h"
#include "lib/support/parse.h"

namespace neuron::kernels {

using hlo::Opcode;
using ET = hlo::ElementType;

int64_t LeafCount(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const auto& s : shape.tuple) n += LeafCount(s);
    return n;
  }
  return shape.IsArray() ? 1 : 0;
}

absl::Status RunCtx::Check() const {
  if (opts->cancel && opts->cancel->load(std::memory_order_relaxed))
    return absl::CancelledError("execution cancelled");
  if (opts->deadline && std::chrono::steady_clock::now() >= *opts->deadline)
    return absl::DeadlineExceededError("execution timed out (NEURON_RT_EXEC_TIMEOUT)");
  return absl::OkStatus();
}

namespace {

// Below this many bytes one thread scans faster than two start.
constexpr int64_t kParallelScanBytes = int64_t{4} << 20;

bool RangeHasNonFinite(const Buf& b);

}  // namespace

// Big outputs (a convolution's activations) are scanned on the pool's
// threads: one thread reads at a fraction of the memory bandwidth.
bool HasNonFinite(const Buf& b) {
  if (!hlo::IsFloatingPoint(b.type) || b.data == nullptr) return false;
  const int parts = ThreadPool::Global().max_parallelism();
  if (b.bytes < kParallelScanBytes || parts < 2) return RangeHasNonFinite(b);
  std::vector<uint8_t> found(parts, 0);
  ThreadPool::Global().Run(parts, [&](int p) {
    Buf piece = b;
    const int64_t first = b.count * p / parts, last = b.count * (p + 1) / parts;
    piece.data = b.data + first * b.elem_size;
    piece.count = last - first;
    piece.bytes = piece.count * b.elem_size;
    found[p] = RangeHasNonFinite(piece);
  });
  return std::find(found.begin(), found.end(), 1) != found.end();
}

namespace {

bool RangeHasNonFinite(const Buf& b) {
  if (b.type == ET::kF32) {
    const uint32_t* p = reinterpret_cast<const uint32_t*>(b.data);
    uint32_t bad = 0;
    for (int64_t i = 0; i < b.count; ++i) bad |= ((p[i] & 0x7f800000u) == 0x7f800000u);
    return bad != 0;
  }
  if (b.type == ET::kF64) {
    const double* p = reinterpret_cast<const double*>(b.data);
    for (int64_t i = 0; i < b.count; ++i) if (!std::isfinite(p[i])) return true;
    return false;
  }
  if (b.type == ET::kBF16 || b.type == ET::kF16) {
    // All-ones exponent: inf or NaN. No early exit, so the loop vectorizes.
    const uint16_t exp = b.type == ET::kBF16 ? 0x7f80 : 0x7c00;
    const uint16_t* p = reinterpret_cast<const uint16_t*>(b.data);
    uint16_t bad = 0;
    for (int64_t i = 0; i < b.count; ++i) bad |= static_cast<uint16_t>((p[i] & exp) == exp);
    return bad != 0;
  }
  float tmp[1024];
  for (int64_t i = 0; i < b.count; i += 1024) {
    int64_t n = std::min<int64_t>(1024, b.count - i);
    LoadToDomain(b.type, b.data + i * b.elem_size, n, tmp);
    for (int64_t j = 0; j < n; ++j) if (!std::isfinite(tmp[j])) return true;
  }
  return false;
}

}  // namespace

absl::Status RunPlan(const CompPlan& plan, RunCtx& ctx) {
  const bool check_nan = ctx.opts->find_first_nonfinite && ctx.stats != nullptr;
  for (const Step& s : plan.steps) {
    if (ctx.check_time) {
      absl::Status st = ctx.Check();
      if (!st.ok()) return st;
    }
    StepObserver* observer = ctx.opts->observer;
    if (observer != nullptr) observer->StepBegin(s.name);
    ScratchScope scratch(ctx.scratch);
    absl::Status st = s.fn(ctx);
    if (observer != nullptr) observer->StepEnd(s.name);
    if (!st.ok()) return st;
    if (check_nan && ctx.stats->first_nonfinite_instruction.empty()) {
      for (const Buf* b : s.outs)
        if (HasNonFinite(*b)) {
          ctx.stats->first_nonfinite_instruction = s.name;
          break;
        }
    }
  }
  return absl::OkStatus();
}

Planner::Planner(BufferAllocator* allocator, std::deque<Buf>* bufs,
                 std::vector<std::pair<void*, size_t>>* allocations)
    : allocator_(allocator), bufs_(bufs), allocations_(allocations) {
  // Leave the host some room: a tenth of what is free, at most 1 GiB.
  available_ = HostMemoryAvailable();
  budget_ = available_ == 0 ? UINT64_MAX
                            : available_ - std::min<uint64_t>(available_ / 10, uint64_t{1} << 30);
}

void* Planner::Reserve(size_t bytes) {
  if (!over_budget_ && bytes <= budget_ - std::min(budget_, planned_bytes_)) {
    void* p = allocator_->Allocate(bytes);
    if (p != nullptr) {
      planned_bytes_ += bytes;
      return p;
    }
  }
  over_budget_ = true;
  planned_bytes_ += bytes;
  return nullptr;
}

absl::Status Planner::BudgetError() const {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "the model's buffers need %s%s of host memory on the simulated device, and this host has "
      "%s free",
      over_budget_ ? "more than " : "", FormatBytes(planned_bytes_), FormatBytes(available_)));
}

absl::Status Planner::CommitBuffers() {
  if (over_budget_) return BudgetError();
  for (const auto& [p, bytes] : to_commit_) std::memset(p, 0, bytes);
  to_commit_.clear();
  return absl::OkStatus();
}

Buf* Planner::NewBuf(ET type, std::vector<int64_t> dims, Buf::Role role, bool shareable) {
  bufs_->push_back(Buf::Of(type, std::move(dims)));
  Buf* b = &bufs_->back();
  b->role = role;
  if (shareable && role == Buf::Role::kOwned) {
    pending_.push_back({b, position_, position_});
    // Its storage comes with the arena, once the computation is planned;
    // one buffer alone past the budget already settles it (before the
    // kernels' own tables for it are built).
    if (static_cast<uint64_t>(b->bytes) > budget_ && !over_budget_) {
      over_budget_ = true;
      planned_bytes_ += static_cast<uint64_t>(b->bytes);
    }
    return b;
  }
  if (role != Buf::Role::kBound) {
    size_t bytes = std::max<size_t>(static_cast<size_t>(b->bytes), 64);
    void* p = Reserve(bytes);
    if (p == nullptr) return b;  // over the budget: planning stops at this instruction
    if (role == Buf::Role::kConstant) {
      std::memset(p, 0, bytes);  // its values are written next
    } else {
      to_commit_.push_back({p, bytes});
    }
    allocations_->push_back({p, bytes});
    b->data = static_cast<uint8_t*>(p);
    (role == Buf::Role::kConstant ? constant_bytes_ : owned_bytes_) += b->bytes;
  }
  return b;
}

std::vector<Buf*> Planner::NewLeaves(const hlo::Shape& shape, Buf::Role role, bool shareable) {
  std::vector<Buf*> out;
  if (shape.IsTuple()) {
    for (const auto& s : shape.tuple) {
      std::vector<Buf*> sub = NewLeaves(s, role, shareable);
      out.insert(out.end(), sub.begin(), sub.end());
    }
  } else if (shape.IsArray()) {
    out.push_back(NewBuf(shape.type, shape.dims, role, shareable));
  }
  return out;
}

Buf* Planner::StorageRoot(Buf* b) const {
  for (int guard = 0; guard < 1000; ++guard) {
    auto it = alias_of_.find(b);
    if (it == alias_of_.end()) return b;
    b = it->second;
  }
  return b;
}

std::map<const Buf*, int64_t> Planner::LastReads(const std::vector<const hlo::Instruction*>& order,
                                                 const std::vector<int64_t>& clock_of,
                                                 const std::set<const hlo::Instruction*>& in_place) {
  std::map<const Buf*, int64_t> last;
  auto read = [&](const hlo::Instruction* value, int64_t when) {
    auto it = values_.find(value);
    if (it == values_.end()) return;
    for (Buf* leaf : it->second) {
      int64_t& t = last.try_emplace(StorageRoot(leaf), when).first->second;
      t = std::max(t, when);
    }
  };
  for (size_t p = 0; p < order.size(); ++p) {
    for (size_t k = 0; k < order[p]->operand_count(); ++k) {
      if (k == 0 && in_place.count(order[p])) continue;
      const hlo::Instruction* o = order[p]->operand(k);
      read(o, clock_of[p]);
      // A splat broadcast is never materialized: its reader reads its source.
      if (IsScalarBroadcast(o)) read(o->operand(0), clock_of[p]);
    }
  }
  return last;
}

void Planner::ExtendLifetimes(const hlo::Computation& comp,
                              const std::vector<const hlo::Instruction*>& order,
                              const std::vector<int64_t>& clock_of, int64_t root_end) {
  if (pending_.empty()) return;
  std::map<const Buf*, int64_t> last = LastReads(order, clock_of);
  if (comp.root()) {
    auto it = values_.find(comp.root());
    if (it != values_.end())
      for (Buf* b : it->second) {
        int64_t& t = last.try_emplace(StorageRoot(b), root_end).first->second;
        t = std::max(t, root_end);
      }
  }
  for (Pending& pd : pending_) {
    auto it = last.find(pd.buf);
    if (it != last.end()) pd.end = std::max(pd.end, it->second);
  }
}

std::vector<bool> DirectRoots(const std::vector<Buf*>& root) {
  std::vector<bool> direct;
  for (size_t i = 0; i < root.size(); ++i) {
    bool unique = true;
    for (size_t j = 0; j < root.size(); ++j)
      if (j != i && root[j] == root[i]) unique = false;
    direct.push_back(unique && root[i]->role == Buf::Role::kOwned);
  }
  return direct;
}

void Planner::AssignSharedStorage(const std::vector<Buf*>& skip) {
  if (pending_.empty()) return;
  // Loop state whose init value nothing reads after the loop starts takes
  // over that value's storage (the loop then runs in it, with no copy).
  std::map<const Buf*, Pending*> pending_of;
  for (Pending& pd : pending_) pending_of[pd.buf] = &pd;
  std::map<Buf*, Buf*> merged;  // loop state -> the init value it lives in
  for (auto it = loop_state_reuse_.begin(); it != loop_state_reuse_.end();) {
    auto state = pending_of.find(it->state);
    auto init = pending_of.find(it->init);
    if (state == pending_of.end() || init == pending_of.end()) {
      ++it;  // planned with an outer computation's buffers
      continue;
    }
    const bool skipped = std::find(skip.begin(), skip.end(), it->init) != skip.end() ||
                         std::find(skip.begin(), skip.end(), it->state) != skip.end();
    if (!skipped && init->second->end <= it->clock && !merged.count(it->init) &&
        it->init->bytes == it->state->bytes) {
      init->second->end = std::max(init->second->end, state->second->end);
      merged[it->state] = it->init;
    }
    it = loop_state_reuse_.erase(it);
  }
  struct Item { Buf* buf; int64_t start, end, size, offset; };
  std::vector<Item> items;
  for (const Pending& pd : pending_) {
    if (std::find(skip.begin(), skip.end(), pd.buf) != skip.end()) continue;
    if (merged.count(pd.buf)) continue;
    int64_t size = (std::max<int64_t>(pd.buf->bytes, 1) + 63) / 64 * 64;
    items.push_back({pd.buf, pd.def, std::max(pd.def, pd.end), size, 0});
  }
  // Biggest first; each goes at the lowest offset free during its lifetime.
  std::vector<size_t> idx(items.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return items[a].size > items[b].size; });
  std::vector<size_t> placed;
  int64_t arena = 0;
  for (size_t i : idx) {
    Item& it = items[i];
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const Item& o = items[j];
      if (o.start <= it.end && it.start <= o.end) busy.push_back({o.offset, o.offset + o.size});
    }
    std::sort(busy.begin(), busy.end());
    int64_t off = 0;
    for (const auto& [b, e] : busy) {
      if (off + it.size <= b) break;
      off = std::max(off, e);
    }
    it.offset = off;
    arena = std::max(arena, off + it.size);
    placed.push_back(i);
  }
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(arena, 64));
  void* mem = Reserve(bytes);
  if (mem == nullptr) return;  // over the budget: Plan fails
  to_commit_.push_back({mem, bytes});
  allocations_->push_back({mem, bytes});
  for (Item& it : items) it.buf->data = static_cast<uint8_t*>(mem) + it.offset;
  for (const auto& [state, init] : merged) state->data = init->data;
  owned_bytes_ += arena;
}

std::vector<const Buf*> Planner::OperandLeaves(const hlo::Instruction& instr) {
  std::vector<const Buf*> r;
  for (const hlo::Instruction* op : instr.operands())
    for (Buf* b : Leaves(op)) r.push_back(b);
  return r;
}

absl::Status Planner::Unsupported(const hlo::Instruction& instr, absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat(
      "unsupported ", std::string(what), " in instruction ", instr.Describe(), " of computation '",
      instr.parent() ? instr.parent()->name() : std::string("?"), "'"));
}

// broadcast of a one-element array (a scalar fill).
bool IsScalarBroadcast(const hlo::Instruction* i) {
  return i->opcode() == Opcode::kBroadcast && i->operand(0)->shape().IsArray() &&
         i->operand(0)->shape().ElementCount().value_or(0) == 1 &&
         i->shape().IsArray() && i->shape().type == i->operand(0)->shape().type;
}

// True when every user reads the broadcast as a splat, so it need not be
// materialized.
static bool OnlySplatUsers(const hlo::Instruction* i) {
  if (!IsScalarBroadcast(i) || i->users().empty()) return false;
  if (i->parent() && i->parent()->root() == i) return false;
  for (const hlo::Instruction* u : i->users())
    if (!IsExprOpcode(u->opcode()) || !u->shape().IsArray()) return false;
  return true;
}

bool Planner::LoopPassesThrough(const CompPlan& body, size_t i) const {
  return body.params.size() == 1 && i < body.params[0].size() && i < body.root.size() &&
         StorageRoot(body.root[i]) == body.params[0][i];
}

bool Planner::LoopResultIsOtherState(const CompPlan& body, size_t i) const {
  if (body.params.size() != 1 || i >= body.root.size()) return false;
  const Buf* root = StorageRoot(body.root[i]);
  for (size_t j = 0; j < body.params[0].size(); ++j)
    if (j != i && root == body.params[0][j]) return true;
  return false;
}

std::vector<Buf*> Planner::LoopState(const CompPlan& body, const std::vector<const Buf*>& init) {
  std::map<const Buf*, int> uses;
  for (const Buf* in : init) ++uses[StorageRoot(const_cast<Buf*>(in))];
  std::vector<Buf*> state;
  for (size_t i = 0; i < init.size(); ++i) {
    Buf* in = const_cast<Buf*>(init[i]);
    if (LoopPassesThrough(body, i)) {
      state.push_back(in);  // read-only all through the loop: no copy, no bytes
      continue;
    }
    Buf* own = NewBuf(in->type, in->dims, Buf::Role::kOwned, /*shareable=*/true);
    Buf* source = StorageRoot(in);
    if (source->role == Buf::Role::kOwned && uses[source] == 1)
      loop_state_reuse_.push_back({own, source, position_});
    state.push_back(own);
  }
  return state;
}

std::vector<bool> Planner::InPlaceLoopResults(const CompPlan& body,
                                              const std::vector<const hlo::Instruction*>& order,
                                              const std::vector<int64_t>& clock_of) {
  std::vector<bool> in_place(body.root.size(), false);
  if (body.params.size() != 1 || body.params[0].size() != body.root.size()) return in_place;
  auto state_of = [&](size_t i) -> const Buf* { return StorageRoot(body.params[0][i]); };
  // A dynamic-update-slice of a state element making the result of the same
  // position updates it in place (a scan's accumulator): its read of that
  // operand does not count.
  std::set<const hlo::Instruction*> updates;
  for (const hlo::Instruction* instr : order) {
    if (instr->opcode() != Opcode::kDynamicUpdateSlice) continue;
    auto out = values_.find(instr);
    auto op = values_.find(instr->operand(0));
    if (out == values_.end() || out->second.size() != 1 || op == values_.end() || op->second.size() != 1)
      continue;
    for (size_t i = 0; i < body.root.size(); ++i)
      if (body.root[i] == out->second[0] && StorageRoot(op->second[0]) == state_of(i)) updates.insert(instr);
  }
  std::map<const Buf*, int64_t> last_read = LastReads(order, clock_of, updates);
  // A state element passed through to a result is read after the trip.
  for (Buf* r : body.root) last_read[StorageRoot(r)] = INT64_MAX;
  const std::vector<bool> unique = DirectRoots(body.root);
  for (size_t i = 0; i < body.root.size(); ++i) {
    if (!unique[i]) continue;
    auto pending = std::find_if(pending_.begin(), pending_.end(),
                                [&](const Pending& pd) { return pd.buf == body.root[i]; });
    if (pending == pending_.end()) continue;
    auto it = last_read.find(state_of(i));
    in_place[i] = it == last_read.end() || it->second < pending->def;
  }
  return in_place;
}

absl::StatusOr<CompPlan*> Planner::Plan(const hlo::Computation& comp, bool share_with_caller,
                                        bool loop_body) {
  const bool entry = plans_.empty();  // the first computation planned
  auto plan = std::make_unique<CompPlan>();
  CompPlan* p = plan.get();
  // A fresh plan per call site: buffers of one call must not be
  // overwritten by another call of the same computation.
  plans_.push_back(std::move(plan));
  p->comp = &comp;
  p->params.resize(comp.parameters().size());
  // Nested computations are planned in the middle of this one: keep this
  // plan's shareable buffers apart.
  std::vector<Pending> outer_pending;
  outer_pending.swap(pending_);
  std::vector<const hlo::Instruction*> order;
  for (const hlo::Instruction* instr : comp.PostOrder()) order.push_back(instr);
  // When each instruction is done reading its operands: after whatever it
  // runs inside (a call's callee reads the operands all through).
  std::vector<int64_t> clock_of(order.size(), position_);
  for (size_t i = 0; i < order.size(); ++i) {
    clock_of[i] = position_;
    if (OnlySplatUsers(order[i])) continue;
    ++position_;
    absl::Status s = PlanInstruction(*p, *order[i]);
    if (s.ok() && over_budget_) s = BudgetError();
    if (!s.ok()) {
      pending_.swap(outer_pending);
      return s;
    }
    clock_of[i] = position_;
  }
  // A shared callee's results are read by its caller after the call (the
  // call's results alias them, see AddCall): they live at least to the
  // call's end, and the caller's reads extend them further.
  ExtendLifetimes(comp, order, clock_of, share_with_caller ? position_ : INT64_MAX);
  if (comp.root() == nullptr) {
    pending_.swap(outer_pending);
    return absl::InvalidArgumentError(absl::StrCat("computation '", comp.name(), "' has no root"));
  }
  p->root = Leaves(comp.root());
  if (loop_body) {
    // A result written straight into the loop state takes no bytes of its
    // own (the while step points it at the state before each trip).
    p->root_in_place = InPlaceLoopResults(*p, order, clock_of);
    for (size_t i = 0; i < p->root_in_place.size(); ++i) {
      if (!p->root_in_place[i]) continue;
      const Buf* in_state = p->root[i];
      pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                    [&](const Pending& pd) { return pd.buf == in_state; }),
                     pending_.end());
    }
  }
  if (share_with_caller) {
    outer_pending.insert(outer_pending.end(), pending_.begin(), pending_.end());
    pending_.clear();
  } else {
    // The entry's direct roots live in the caller's output tensors.
    std::vector<Buf*> skip;
    if (entry) {
      const std::vector<bool> direct = DirectRoots(p->root);
      for (size_t i = 0; i < direct.size(); ++i)
        if (direct[i]) skip.push_back(p->root[i]);
    }
    AssignSharedStorage(skip);
  }
  pending_.swap(outer_pending);
  if (over_budget_) return BudgetError();
  return p;
}

// Binds callee parameters to the caller's operand leaves.
static void BindParams(const CompPlan& callee, const std::vector<const Buf*>& leaves, size_t first) {
  size_t k = first;
  for (const auto& param : callee.params)
    for (Buf* b : param) b->data = k < leaves.size() ? leaves[k++]->data : nullptr;
}

absl::Status Planner::AddCall(CompPlan& plan, const hlo::Instruction& instr,
                              const hlo::Computation& callee) {
  absl::StatusOr<CompPlan*> cp = Plan(callee, /*share_with_caller=*/true);
  if (!cp.ok()) return cp.status();
  CompPlan* c = *cp;
  std::vector<const Buf*> ins = OperandLeaves(instr);
  std::vector<Buf*> outs;
  for (Buf* r : c->root) outs.push_back(NewBuf(r->type, r->dims, Buf::Role::kBound));
  values_[&instr] = outs;
  // For lifetimes: the call's results are the callee's root buffers, and
  // the callee's parameters are the caller's operands (bound in the step
  // below), so reading a result the callee passed through reads an operand.
  for (size_t i = 0; i < outs.size(); ++i) alias_of_[outs[i]] = c->root[i];
  size_t k = 0;
  for (const auto& param : c->params)
    for (Buf* b : param)
      if (k < ins.size()) alias_of_[b] = const_cast<Buf*>(ins[k++]);
  plan.steps.push_back({instr.name(), [c, ins, outs](RunCtx& ctx) -> absl::Status {
    BindParams(*c, ins, 0);
    absl::Status s = RunPlan(*c, ctx);
    if (!s.ok()) return s;
    for (size_t i = 0; i < outs.size(); ++i) outs[i]->data = c->root[i]->data;
    return absl::OkStatus();
  }, {}});
  return absl::OkStatus();
}

namespace {

bool IsIdentityCustomCall(const std::string& t) {
  static const std::set<std::string> kTargets = {
      "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost",
      "MoveToDevice", "LayoutConstraint", "annotate_device_placement",
      "xla.sdy.FuncResultSharding", "AwsNeuronTransferWithStaticRing", "SetBound"};
  return kTargets.count(t) > 0;
}

hlo::Opcode ReductionOf(const hlo::Instruction& instr) {
  if (instr.to_apply() == nullptr) return Opcode::kAdd;
  const hlo::Instruction* root = instr.to_apply()->root();
  return root ? root->opcode() : Opcode::kAdd;
}

CollectiveCall MakeCall(const hlo::Instruction& instr, ET type) {
  CollectiveCall c;
  c.type = type;
  c.replica_groups = instr.attrs().replica_groups;
  c.channel_id = instr.attrs().channel_id.value_or(-1);
  c.use_global_device_ids = instr.attrs().use_global_device_ids;
  return c;
}

// Position of `id` within its replica group and the group's size.
std::pair<int64_t, int64_t> GroupPosition(const std::vector<std::vector<int64_t>>& groups,
                                          int64_t id, int64_t world) {
  for (const auto& g : groups)
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] == id) return {static_cast<int64_t>(i), static_cast<int64_t>(g.size())};
  return {id, world};
}

// An all-reduce's reducer computation, for element types or reductions the
// collectives engine does not do itself: compiled on first need, so plans
// whose collectives the engine handles pay nothing. Locked because a
// ScalarFn keeps its registers between calls.
struct CrossRankReducer {
  explicit CrossRankReducer(const hlo::Computation* to_apply) : to_apply(to_apply) {}
  const hlo::Computation* to_apply;
  std::mutex mu;
  bool compiled = false;
  std::optional<ScalarFn> fn;
  std::vector<uint8_t> gathered;
  std::vector<uint64_t> acc, next;
};

// out = the group's reduction of `in`. The engine reduces the types it
// knows (f32, bf16, int32, ...); for the rest (4-bit and 8-bit floats,
// complex, ...) every member's input is gathered and folded here with the
// reducer, in group order.
absl::Status CrossRankAllReduce(const RunCtx& ctx, const CollectiveCall& call, Opcode red,
                                CrossRankReducer& reducer, const Buf& in, uint8_t* out) {
  CollectiveOps* coll = ctx.opts->collectives;
  absl::Status s = coll->AllReduce(call, red, in.data, out, in.count);
  if (s.code() != absl::StatusCode::kUnimplemented || reducer.to_apply == nullptr) return s;
  std::lock_guard<std::mutex> lock(reducer.mu);
  if (!reducer.compiled) {
    reducer.compiled = true;
    absl::StatusOr<ScalarFn> fn = ScalarFn::Compile(*reducer.to_apply);
    if (fn.ok()) reducer.fn.emplace(std::move(*fn));
  }
  if (!reducer.fn) return s;
  const int64_t world = std::max(1, ctx.opts->replica_count);
  const int64_t members = GroupPosition(call.replica_groups, ctx.opts->replica_id, world).second;
  std::vector<uint8_t>& gathered = reducer.gathered;
  gathered.resize(in.bytes * members + 1);
  if (absl::Status g = coll->AllGather(call, in.data, gathered.data(), in.bytes); !g.ok()) return g;
  constexpr int64_t kLanes = ExprProgram::kTile;
  reducer.acc.resize(kLanes * 2);
  reducer.next.resize(kLanes * 2);
  const int64_t es = in.elem_size;
  const int lane_bytes = DomainBytes(DomainOf(in.type));
  for (int64_t i = 0; i < in.count; i += kLanes) {
    const int64_t n = std::min(kLanes, in.count - i);
    LoadToDomain(in.type, gathered.data() + i * es, n, reducer.acc.data());
    for (int64_t m = 1; m < members; ++m) {
      LoadToDomain(in.type, gathered.data() + m * in.bytes + i * es, n, reducer.next.data());
      const void* params[2] = {reducer.acc.data(), reducer.next.data()};
      const void* result[1] = {nullptr};
      reducer.fn->EvalLanes(params, n, result);
      std::memcpy(reducer.acc.data(), result[0], n * lane_bytes);
    }
    StoreFromDomain(in.type, reducer.acc.data(), n, out + i * es);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Planner::PlanInstruction(CompPlan& plan, const hlo::Instruction& instr) {
  // The scratch its own kernels declare: what its step takes of the
  // workspace. Computations it runs (a call's, a loop's) are planned inside
  // and measured step by step, so theirs is taken off its own.
  const uint64_t before = LazyScratch::Declared();
  nested_scratch_.push_back(0);
  absl::Status s = PlanKernels(plan, instr);
  const uint64_t total = LazyScratch::Declared() - before;
  const uint64_t nested = nested_scratch_.back();
  nested_scratch_.pop_back();
  workspace_ = std::max(workspace_, total - std::min(total, nested));
  if (!nested_scratch_.empty()) nested_scratch_.back() += total;
  return s;
}

absl::Status Planner::PlanKernels(CompPlan& plan, const hlo::Instruction& instr) {
  const hlo::Shape& shape = instr.shape();
  const Opcode op = instr.opcode();
  // Element types must be ones the kernels hold.
  std::function<bool(const hlo::Shape&)> types_ok = [&](const hlo::Shape& s) {
    if (s.IsTuple()) {
      for (const auto& e : s.tuple) if (!types_ok(e)) return false;
      return true;
    }
    return s.IsToken() || IsSupportedElementType(s.type);
  };
  if (!types_ok(shape)) return Unsupported(instr, absl::StrCat("element type in ", shape.ToString(false)));
  if (absl::Status s = KernelRefusal(instr); !s.ok()) return Unsupported(instr, s.message());
  for (const auto* o : instr.operands())
    if (!types_ok(o->shape())) return Unsupported(instr, absl::StrCat("operand element type ", o->shape().ToString(false)));
  for (bool d : shape.dynamic) if (d) return Unsupported(instr, "dynamic dimension");

  auto own = [&]() { return values_[&instr] = NewLeaves(shape, Buf::Role::kOwned, /*shareable=*/true); };
  // A kernel object planned for the instruction (or the reason it cannot
  // be) runs as `kernel->Run(operand leaves, owned results)`.
  auto kernel_step = [&](auto planned) -> absl::Status {
    if (!planned.ok()) return Unsupported(instr, planned.status().message());
    std::shared_ptr<std::decay_t<decltype(**planned)>> kernel = std::move(*planned);
    std::vector<const Buf*> ins = OperandLeaves(instr);
    std::vector<Buf*> outs = own();
    plan.steps.push_back({instr.name(), [kernel, ins, outs](RunCtx&) { kernel->Run(ins, outs); return absl::OkStatus(); }, outs});
    return absl::OkStatus();
  };
  // One array operand in, one owned array out (the data-movement kernels):
  // `kernel(in, out)` runs as the step.
  auto unary_step = [&](auto kernel) {
    const Buf* in = Leaves(instr.operand(0))[0];
    Buf* out = own()[0];
    plan.steps.push_back({instr.name(), [in, out, kernel](RunCtx&) { kernel(*in, *out); return absl::OkStatus(); }, {out}});
    return absl::OkStatus();
  };
  auto alias_same = [&](const hlo::Instruction* src) { values_[&instr] = Leaves(src); };
  // Same bytes, new dims: a bound buffer re-pointed at run time.
  auto alias_reshape = [&](const hlo::Instruction* src) -> absl::Status {
    const std::vector<Buf*>& in = Leaves(src);
    if (in.size() != 1 || !shape.IsArray()) return Unsupported(instr, "reshape of a tuple");
    Buf* out = NewBuf(shape.type, shape.dims, Buf::Role::kBound);
    if (out->bytes != in[0]->bytes) return Unsupported(instr, "bitcast changing the byte size");
    values_[&instr] = {out};
    alias_of_[out] = in[0];
    Buf* src_buf = in[0];
    plan.steps.push_back({instr.name(), [out, src_buf](RunCtx&) { out->data = src_buf->data; return absl::OkStatus(); }, {}});
    return absl::OkStatus();
  };

  // Kernels that compute in real arithmetic only.
  if (!RunsWithComplexTypes(op)) {
    std::function<bool(const hlo::Shape&)> has_complex = [&](const hlo::Shape& s) {
      if (s.IsTuple()) {
        for (const auto& e : s.tuple) if (has_complex(e)) return true;
        return false;
      }
      return hlo::IsComplex(s.type);
    };
    bool cx = has_complex(shape);
    for (const auto* o : instr.operands()) cx = cx || has_complex(o->shape());
    if (cx && !(op == Opcode::kCustomCall && IsIdentityCustomCall(instr.attrs().custom_call_target)))
      return Unsupported(instr, absl::StrCat("complex element type for '", std::string(hlo::OpcodeName(op)), "'"));
  }

  switch (op) {
    case Opcode::kParameter: {
      std::vector<Buf*> leaves = NewLeaves(shape, Buf::Role::kBound);
      int64_t n = instr.attrs().parameter_number;
      if (n < 0 || n >= static_cast<int64_t>(plan.params.size())) return Unsupported(instr, "parameter number");
      plan.params[n] = leaves;
      values_[&instr] = leaves;
      return absl::OkStatus();
    }
    case Opcode::kConstant: {
      const auto& lit = instr.attrs().literal;
      if ((!lit || lit->elided()) && external_constant_ && shape.IsArray()) {
        if (const uint8_t* bytes = external_constant_(instr)) {
          if (reinterpret_cast<uintptr_t>(bytes) % 64 == 0) {
            // In place: the weights stay where the loader mapped them.
            Buf* b = NewBuf(shape.type, shape.dims, Buf::Role::kBound);
            b->data = const_cast<uint8_t*>(bytes);
            constant_bytes_ += b->bytes;
            values_[&instr] = {b};
          } else {
            Buf* b = NewBuf(shape.type, shape.dims, Buf::Role::kConstant);
            if (over_budget_) return BudgetError();
            std::memcpy(b->data, bytes, static_cast<size_t>(b->bytes));
            values_[&instr] = {b};
          }
          return absl::OkStatus();
        }
      }
      if (!lit || lit->elided()) return Unsupported(instr, "constant without values (elided literal)");
      std::vector<Buf*> leaves = NewLeaves(shape, Buf::Role::kConstant);
      if (over_budget_) return BudgetError();
      std::vector<const hlo::Literal*> lits;
      std::function<void(const hlo::Literal&)> flat = [&](const hlo::Literal& l) {
        if (l.shape().IsTuple()) for (const auto& e : l.elements()) flat(e);
        else if (l.shape().IsArray()) lits.push_back(&l);
      };
      flat(*lit);
      if (lits.size() != leaves.size()) return Unsupported(instr, "constant literal shape");
      for (size_t i = 0; i < leaves.size(); ++i) {
        const size_t n = std::min<size_t>(leaves[i]->bytes, lits[i]->data().size());
        if (n > 0) std::memcpy(leaves[i]->data, lits[i]->data().data(), n);  // empty: no pointers
      }
      values_[&instr] = leaves;
      return absl::OkStatus();
    }
    case Opcode::kIota: {
      std::vector<Buf*> leaves = NewLeaves(shape, Buf::Role::kConstant);
      if (over_budget_) return BudgetError();
      Iota(instr.attrs().iota_dimension, *leaves[0]);
      values_[&instr] = leaves;
      return absl::OkStatus();
    }
    case Opcode::kTuple: {
      std::vector<Buf*> leaves;
      for (const auto* o : instr.operands()) for (Buf* b : Leaves(o)) leaves.push_back(b);
      values_[&instr] = leaves;
      return absl::OkStatus();
    }
    case Opcode::kGetTupleElement: {
      const hlo::Shape& ts = instr.operand(0)->shape();
      int64_t idx = instr.attrs().tuple_index;
      if (!ts.IsTuple() || idx < 0 || idx >= static_cast<int64_t>(ts.tuple.size())) return Unsupported(instr, "tuple index");
      int64_t first = 0;
      for (int64_t i = 0; i < idx; ++i) first += LeafCount(ts.tuple[i]);
      const auto& in = Leaves(instr.operand(0));
      values_[&instr] = std::vector<Buf*>(in.begin() + first, in.begin() + first + LeafCount(ts.tuple[idx]));
      return absl::OkStatus();
    }
    case Opcode::kCopy:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kAddDependency:
    case Opcode::kAsyncUpdate:
    case Opcode::kAllReduceDone:
      alias_same(instr.operand(0));
      return absl::OkStatus();
    case Opcode::kAfterAll:
      values_[&instr] = {};
      return absl::OkStatus();
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kDynamicReshape:
    case Opcode::kSetDimensionSize:
      return alias_reshape(instr.operand(0));
    case Opcode::kBitcastConvert:
      // pred is one byte here, as in XLA's bitcasts.
      if ((shape.type != ET::kPred && hlo::BitWidth(shape.type) % 8 != 0) ||
          (instr.operand(0)->shape().type != ET::kPred && hlo::BitWidth(instr.operand(0)->shape().type) % 8 != 0))
        return Unsupported(instr, "bitcast-convert of sub-byte types");
      return alias_reshape(instr.operand(0));
    case Opcode::kInfeed: {
      // (data, token): the data's arrays come from the host feed.
      if (!shape.IsTuple() || shape.tuple.empty()) return Unsupported(instr, "infeed shape");
      std::vector<Buf*> data = NewLeaves(shape.tuple[0], Buf::Role::kOwned, /*shareable=*/true);
      values_[&instr] = data;
      std::vector<hlo::Shape> shapes;
      for (const Buf* b : data) shapes.push_back(hlo::Shape::Array(b->type, b->dims));
      const std::string name = instr.name();
      plan.steps.push_back({name, [data, shapes, name](RunCtx& ctx) -> absl::Status {
        if (ctx.opts->feed == nullptr)
          return absl::FailedPreconditionError(absl::StrCat(
              "infeed '", name, "': no infeed values were given (neuron-exec --infeed FILE.npy)"));
        for (size_t i = 0; i < data.size(); ++i) {
          absl::Status s = ctx.opts->feed->Infeed(name, shapes[i], data[i]->data,
                                                  static_cast<size_t>(data[i]->bytes));
          if (!s.ok()) return s;
        }
        return absl::OkStatus();
      }, data});
      return absl::OkStatus();
    }
    case Opcode::kOutfeed: {
      if (instr.operand_count() < 1) return Unsupported(instr, "outfeed operands");
      std::vector<const Buf*> data;
      for (Buf* b : Leaves(instr.operand(0))) data.push_back(b);
      values_[&instr] = {};  // a token
      const std::string name = instr.name();
      plan.steps.push_back({name, [data, name](RunCtx& ctx) -> absl::Status {
        if (ctx.opts->feed == nullptr)
          return absl::FailedPreconditionError(absl::StrCat(
              "outfeed '", name, "': nowhere to write its values (neuron-exec --outfeed-dir DIR)"));
        for (const Buf* b : data) {
          absl::Status s = ctx.opts->feed->Outfeed(name, hlo::Shape::Array(b->type, b->dims), b->data,
                                                   static_cast<size_t>(b->bytes));
          if (!s.ok()) return s;
        }
        return absl::OkStatus();
      }, {}});
      return absl::OkStatus();
    }
    case Opcode::kGetDimensionSize: {
      std::vector<Buf*> leaves = NewLeaves(shape, Buf::Role::kConstant);
      if (over_budget_) return BudgetError();
      int64_t d = instr.attrs().dimensions.empty() ? 0 : instr.attrs().dimensions[0];
      const auto& od = instr.operand(0)->shape().dims;
      StoreInt(shape.type, leaves[0]->data, 0, d < static_cast<int64_t>(od.size()) ? od[d] : 0);
      values_[&instr] = leaves;
      return absl::OkStatus();
    }
    default:
      break;
  }

  if (IsExprOpcode(op) && shape.IsArray()) {
    // A broadcast scalar operand is read as the scalar itself.
    std::vector<bool> splat;
    std::vector<const Buf*> ins;
    for (const hlo::Instruction* o : instr.operands()) {
      bool s = IsScalarBroadcast(o);
      splat.push_back(s);
      ins.push_back(s ? Leaves(o->operand(0))[0] : Leaves(o)[0]);
    }
    absl::StatusOr<ExprProgram> prog = ExprProgram::CompileInstruction(instr, splat);
    if (!prog.ok()) return Unsupported(instr, prog.status().message());
    auto k = std::make_shared<ElementwiseKernel>(std::move(*prog));
    std::vector<Buf*> outs = own();
    plan.steps.push_back({instr.name(), [k, ins, outs](RunCtx& ctx) {
      k->Run(ins, outs, ctx.expr, ctx.opts->threads);
      return absl::OkStatus();
    }, outs});
    return absl::OkStatus();
  }

  switch (op) {
    case Opcode::kFusion: {
      const hlo::Computation* callee = instr.to_apply();
      if (!callee) return Unsupported(instr, "fusion without a computation");
      // The fused computation's parameters: each operand's (first) leaf.
      auto fusion_operands = [&] {
        std::vector<const Buf*> ins;
        for (const auto* o : instr.operands()) {
          const auto& l = Leaves(o);
          ins.push_back(l.empty() ? nullptr : l[0]);
        }
        return ins;
      };
      absl::StatusOr<ExprProgram> prog = ExprProgram::Compile(*callee, /*lanes_mode=*/false);
      if (prog.ok()) {
        // Every output must have the lane count; parameters map to operands.
        bool ok = true;
        std::vector<Buf*> outs = NewLeaves(shape, Buf::Role::kOwned, /*shareable=*/true);
        for (Buf* b : outs) if (b->count != outs[0]->count) ok = false;
        for (const auto& in : prog->inputs())
          if (in.parameter >= static_cast<int>(instr.operand_count()) ||
              (in.parameter >= 0 && !instr.operand(in.parameter)->shape().IsArray())) ok = false;
        if (ok) {
          values_[&instr] = outs;
          auto k = std::make_shared<ElementwiseKernel>(std::move(*prog));
          std::vector<const Buf*> ins = fusion_operands();
          plan.steps.push_back({instr.name(), [k, ins, outs](RunCtx& ctx) {
            k->Run(ins, outs, ctx.expr, ctx.opts->threads);
            return absl::OkStatus();
          }, outs});
          return absl::OkStatus();
        }
      }
      // A reduction of elementwise work (an input fusion): slice by slice,
      // the reduced value never whole.
      if (callee->root() != nullptr && callee->root()->opcode() == Opcode::kReduce && shape.IsArray()) {
        absl::StatusOr<std::unique_ptr<FusedReduceKernel>> fused = FusedReduceKernel::Plan(instr);
        if (fused.ok()) {
          std::shared_ptr<FusedReduceKernel> k = std::move(*fused);
          std::vector<Buf*> outs = NewLeaves(shape, Buf::Role::kOwned, /*shareable=*/true);
          values_[&instr] = outs;
          std::vector<const Buf*> ins = fusion_operands();
          plan.steps.push_back({instr.name(), [k, ins, out = outs[0]](RunCtx& ctx) {
            k->Run(ins, *out, ctx.expr, ctx.opts->threads);
            return absl::OkStatus();
          }, outs});
          return absl::OkStatus();
        }
      }
      return AddCall(plan, instr, *callee);
    }
    case Opcode::kCall:
    case Opcode::kAsyncStart: {
      if (!instr.to_apply()) return Unsupported(instr, "call without a computation");
      if (op == Opcode::kCall) return AddCall(plan, instr, *instr.to_apply());
      // async-start: ((operands), results, context...). Run the callee now.
      absl::Status s = AddCall(plan, instr, *instr.to_apply());
      if (!s.ok()) return s;
      std::vector<Buf*> results = values_[&instr];
      std::vector<Buf*> leaves;
      for (const auto* o : instr.operands()) for (Buf* b : Leaves(o)) leaves.push_back(b);
      leaves.insert(leaves.end(), results.begin(), results.end());
      int64_t want = LeafCount(shape);
      for (size_t i = 2; shape.IsTuple() && i < shape.tuple.size(); ++i)
        for (Buf* b : NewLeaves(shape.tuple[i], Buf::Role::kOwned)) leaves.push_back(b);
      if (static_cast<int64_t>(leaves.size()) != want) return Unsupported(instr, "async-start shape");
      values_[&instr] = leaves;
      return absl::OkStatus();
    }
    case Opcode::kAsyncDone: {
      const hlo::Shape& ts = instr.operand(0)->shape();
      if (!ts.IsTuple() || ts.tuple.size() < 2) return Unsupported(instr, "async-done operand");
      int64_t first = LeafCount(ts.tuple[0]);
      const auto& in = Leaves(instr.operand(0));
      values_[&instr] = std::vector<Buf*>(in.begin() + first, in.begin() + first + LeafCount(ts.tuple[1]));
      return absl::OkStatus();
    }
    case Opcode::kWhile: {
      // The condition and the body share the caller's arena, as XLA's
      // buffer assignment plans them: their buffers live within the loop's
      // span of the timeline, each trip reusing the same bytes, so they may
      // overlap whatever the caller no longer holds while the loop runs.
      const int64_t loop_start = position_;
      absl::StatusOr<CompPlan*> cp = Plan(*instr.while_condition(), /*share_with_caller=*/true);
      if (!cp.ok()) return cp.status();
      absl::StatusOr<CompPlan*> bp = Plan(*instr.while_body(), /*share_with_caller=*/true, /*loop_body=*/true);
      if (!bp.ok()) return bp.status();
      CompPlan* cond = *cp;
      CompPlan* body = *bp;
      // The loop state lives in `state` (see LoopState: an element the body
      // never writes is its init value itself, and one whose init value
      // nothing reads afterwards takes over that value's storage). After
      // each trip the body's results are copied back into it; a result that
      // is a body parameter of another position (a swap) goes through
      // `spill` first, so no copy overwrites state another copy still
      // reads. A result the body passes through unchanged costs nothing:
      // loop-invariant state (weights carried by the loop) is never copied.
      std::vector<const Buf*> init = OperandLeaves(instr);
      std::vector<Buf*> outs = NewLeaves(shape, Buf::Role::kBound);
      if (body->root.size() != outs.size() || init.size() != outs.size())
        return Unsupported(instr, "loop body result shape");
      std::vector<Buf*> state = LoopState(*body, init);
      // The state is written before the first trip and read through every
      // one: it is live from the loop's start, not from where it was made.
      for (Pending& pd : pending_)
        if (std::find(state.begin(), state.end(), pd.buf) != state.end()) pd.def = std::min(pd.def, loop_start);
      std::vector<Buf*> spill(state.size(), nullptr);
      for (size_t i = 0; i < state.size(); ++i) {
        alias_of_[outs[i]] = state[i];
        if (LoopResultIsOtherState(*body, i))
          spill[i] = NewBuf(state[i]->type, state[i]->dims, Buf::Role::kOwned, /*shareable=*/true);
      }
      values_[&instr] = outs;
      plan.steps.push_back({instr.name(), [cond, body, state, spill, outs, init](RunCtx& ctx) -> absl::Status {
        const size_t n = state.size();
        for (size_t i = 0; i < n; ++i) {
          if (outs[i]->bytes && init[i]->data != state[i]->data)
            std::memcpy(state[i]->data, init[i]->data, outs[i]->bytes);
        }
        // Trips of an outermost loop go to the run's stats.
        struct Depth {
          RunCtx& ctx;
          explicit Depth(RunCtx& c) : ctx(c) { ++ctx.loop_depth; }
          ~Depth() { --ctx.loop_depth; }
        } depth(ctx);
        const bool outermost = ctx.loop_depth == 1;
        const auto loop_start = std::chrono::steady_clock::now();
        int64_t trips = 0;
        while (true) {
          absl::Status st = ctx.Check();
          if (!st.ok()) return st;
          for (auto& prm : cond->params) for (size_t i = 0; i < prm.size(); ++i) prm[i]->data = state[i]->data;
          st = RunPlan(*cond, ctx);
          if (!st.ok()) return st;
          if (cond->root.empty() || cond->root[0]->data[0] == 0) break;
          for (auto& prm : body->params) for (size_t i = 0; i < prm.size(); ++i) prm[i]->data = state[i]->data;
          for (size_t i = 0; i < body->root_in_place.size(); ++i)
            if (body->root_in_place[i]) body->root[i]->data = state[i]->data;
          st = RunPlan(*body, ctx);
          if (!st.ok()) return st;
          ++trips;
          for (size_t i = 0; i < n; ++i) {
            const uint8_t* result = body->root[i]->data;
            if (spill[i] && result != state[i]->data && outs[i]->bytes)
              std::memcpy(spill[i]->data, result, outs[i]->bytes);
          }
          for (size_t i = 0; i < n; ++i) {
            const uint8_t* result = spill[i] ? spill[i]->data : body->root[i]->data;
            if (!outs[i]->bytes || body->root[i]->data == state[i]->data) continue;
            std::memcpy(state[i]->data, result, outs[i]->bytes);
          }
        }
        for (size_t i = 0; i < outs.size(); ++i) outs[i]->data = state[i]->data;
        if (outermost && ctx.stats != nullptr && trips > ctx.stats->loop_trips) {
          ctx.stats->loop_trips = trips;
          ctx.stats->loop_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now() - loop_start)
                                   .count();
        }
        return absl::OkStatus();
      }, {}});
      return absl::OkStatus();
    }
    case Opcode::kConditional: {
      std::vector<CompPlan*> branches;
      for (const hlo::Computation* c : instr.called_computations()) {
        absl::StatusOr<CompPlan*> p = Plan(*c);
        if (!p.ok()) return p.status();
        branches.push_back(*p);
      }
      if (branches.empty()) return Unsupported(instr, "conditional without branches");
      std::vector<Buf*> outs = NewLeaves(shape, Buf::Role::kBound);
      values_[&instr] = outs;
      const Buf* selector = Leaves(instr.operand(0))[0];
      std::vector<std::vector<const Buf*>> args;
      for (size_t i = 1; i < instr.operand_count(); ++i) {
        std::vector<const Buf*> l;
        for (Buf* b : Leaves(instr.operand(i))) l.push_back(b);
        args.push_back(l);
      }
      plan.steps.push_back({instr.name(), [branches, outs, selector, args](RunCtx& ctx) -> absl::Status {
        int64_t idx;
        if (selector->type == ET::kPred) idx = selector->data[0] ? 0 : 1;
        else {
          idx = LoadInt(selector->type, selector->data, 0);
          if (idx < 0 || idx >= static_cast<int64_t>(branches.size())) idx = branches.size() - 1;
        }
        CompPlan* br = branches[idx];
        if (idx < static_cast<int64_t>(args.size())) BindParams(*br, args[idx], 0);
        absl::Status s = RunPlan(*br, ctx);
        if (!s.ok()) return s;
        for (size_t i = 0; i < outs.size() && i < br->root.size(); ++i) outs[i]->data = br->root[i]->data;
        return absl::OkStatus();
      }, {}});
      return absl::OkStatus();
    }
    case Opcode::kMap: {
      absl::StatusOr<ExprProgram> prog = ExprProgram::Compile(*instr.to_apply(), /*lanes_mode=*/true);
      if (!prog.ok()) return Unsupported(instr, prog.status().message());
      auto k = std::make_shared<ElementwiseKernel>(std::move(*prog));
      std::vector<const Buf*> ins = OperandLeaves(instr);
      std::vector<Buf*> outs = own();
      plan.steps.push_back({instr.name(), [k, ins, outs](RunCtx& ctx) {
        k->Run(ins, outs, ctx.expr, ctx.opts->threads);
        return absl::OkStatus();
      }, outs});
      return absl::OkStatus();
    }
    case Opcode::kBroadcast:
      return unary_step([dims = instr.attrs().dimensions](const Buf& in, Buf& out) { Broadcast(in, dims, out); });
    case Opcode::kTranspose:
      return unary_step([perm = instr.attrs().dimensions](const Buf& in, Buf& out) { Transpose(in, perm, out); });
    case Opcode::kSlice:
      return unary_step([sl = instr.attrs().slice](const Buf& in, Buf& out) { Slice(in, sl, out); });
    case Opcode::kDynamicSlice: {
      std::vector<const Buf*> ins = OperandLeaves(instr);
      Buf* out = own()[0];
      std::vector<const Buf*> starts(ins.begin() + 1, ins.end());
      // A single vector of indices (old form) is split per dim.
      const Buf* in = ins[0];
      plan.steps.push_back({instr.name(), [in, starts, out](RunCtx&) { DynamicSlice(*in, starts, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kDynamicUpdateSlice: {
      std::vector<const Buf*> ins = OperandLeaves(instr);
      Buf* out = own()[0];
      std::vector<const Buf*> starts(ins.begin() + 2, ins.end());
      const Buf* a = ins[0];
      const Buf* u = ins[1];
      plan.steps.push_back({instr.name(), [a, u, starts, out](RunCtx&) { DynamicUpdateSlice(*a, *u, starts, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kConcatenate: {
      std::vector<const Buf*> ins = OperandLeaves(instr);
      Buf* out = own()[0];
      int64_t dim = instr.attrs().dimensions.empty() ? 0 : instr.attrs().dimensions[0];
      plan.steps.push_back({instr.name(), [ins, dim, out](RunCtx&) { Concatenate(ins, dim, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kPad: {
      std::vector<const Buf*> ins = OperandLeaves(instr);
      Buf* out = own()[0];
      auto pad = instr.attrs().padding;
      pad.resize(instr.operand(0)->shape().rank());
      const Buf* in = ins[0];
      const Buf* v = ins[1];
      plan.steps.push_back({instr.name(), [in, v, pad, out](RunCtx&) { Pad(*in, *v, pad, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kReverse:
      return unary_step([dims = instr.attrs().dimensions](const Buf& in, Buf& out) { Reverse(in, dims, out); });
    case Opcode::kDot: {
      // Without dimension numbers nothing is contracted: an outer product.
      hlo::DotDims dd;
      if (instr.attrs().dot) dd = *instr.attrs().dot;
      auto k = PlanDot(instr.operand(0)->shape(), instr.operand(1)->shape(), dd, shape);
      if (!k.ok()) return Unsupported(instr, k.status().message());
      std::shared_ptr<DotKernel> kernel = std::move(*k);
      const Buf* l = Leaves(instr.operand(0))[0];
      const Buf* r = Leaves(instr.operand(1))[0];
      Buf* out = own()[0];
      plan.steps.push_back({instr.name(), [kernel, l, r, out](RunCtx&) { kernel->Run(*l, *r, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kConvolution: {
      auto k = PlanConvolution(instr.operand(0)->shape(), instr.operand(1)->shape(), shape, instr.attrs());
      if (!k.ok()) return Unsupported(instr, k.status().message());
      std::shared_ptr<DotKernel> kernel = std::move(*k);
      const Buf* l = Leaves(instr.operand(0))[0];
      const Buf* r = Leaves(instr.operand(1))[0];
      Buf* out = own()[0];
      plan.steps.push_back({instr.name(), [kernel, l, r, out](RunCtx&) { kernel->Run(*l, *r, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter: {
      auto k = op == Opcode::kReduce ? PlanReduce(instr)
               : op == Opcode::kReduceWindow ? PlanReduceWindow(instr) : PlanSelectAndScatter(instr);
      if (!k.ok()) return Unsupported(instr, k.status().message());
      std::shared_ptr<ReduceLikeKernel> kernel = std::move(*k);
      std::vector<const Buf*> ins = OperandLeaves(instr);
      std::vector<Buf*> outs = own();
      plan.steps.push_back({instr.name(), [kernel, ins, outs](RunCtx& ctx) { kernel->Run(ins, outs, ctx.opts->threads); return absl::OkStatus(); }, outs});
      return absl::OkStatus();
    }
    case Opcode::kGather: {
      if (!instr.attrs().gather) return Unsupported(instr, "gather without dimension numbers");
      const Buf* a = Leaves(instr.operand(0))[0];
      const Buf* idx = Leaves(instr.operand(1))[0];
      Buf* out = own()[0];
      hlo::GatherDims g = *instr.attrs().gather;
      std::vector<int64_t> sizes = instr.attrs().gather_slice_sizes;
      sizes.resize(a->rank(), 1);
      plan.steps.push_back({instr.name(), [a, idx, out, g, sizes](RunCtx&) { Gather(*a, *idx, g, sizes, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kScatter:
      return kernel_step(ScatterKernel::Plan(instr));
    case Opcode::kSort:
      return kernel_step(SortKernel::Plan(instr));
    case Opcode::kTopK: {
      const Buf* in = Leaves(instr.operand(0))[0];
      std::vector<Buf*> outs = own();
      if (outs.size() != 2) return Unsupported(instr, "topk result shape");
      int64_t k = instr.attrs().k;
      bool largest = instr.attrs().largest;
      plan.steps.push_back({instr.name(), [in, outs, k, largest](RunCtx&) { TopK(*in, k, largest, *outs[0], *outs[1]); return absl::OkStatus(); }, outs});
      return absl::OkStatus();
    }
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: {
      Buf* out = own()[0];
      bool replica = op == Opcode::kReplicaId;
      plan.steps.push_back({instr.name(), [out, replica](RunCtx& ctx) {
        StoreInt(out->type, out->data, 0, replica ? ctx.opts->replica_id : ctx.opts->partition_id);
        return absl::OkStatus();
      }, {}});
      return absl::OkStatus();
    }
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: {
      std::vector<const Buf*> ins = OperandLeaves(instr);
      std::vector<Buf*> outs = own();
      if (ins.size() != outs.size()) return Unsupported(instr, "all-reduce shape");
      Opcode red = ReductionOf(instr);
      std::vector<CollectiveCall> calls;
      for (const Buf* b : ins) calls.push_back(MakeCall(instr, b->type));
      auto reducer = std::make_shared<CrossRankReducer>(instr.to_apply());
      plan.steps.push_back({instr.name(), [ins, outs, red, calls, reducer](RunCtx& ctx) -> absl::Status {
        for (size_t i = 0; i < ins.size(); ++i) {
          if (ctx.opts->collectives) {
            absl::Status s = CrossRankAllReduce(ctx, calls[i], red, *reducer, *ins[i], outs[i]->data);
            if (!s.ok()) return s;
          } else if (outs[i]->bytes) {
            std::memcpy(outs[i]->data, ins[i]->data, outs[i]->bytes);
          }
        }
        return absl::OkStatus();
      }, outs});
      return absl::OkStatus();
    }
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveBroadcast: {
      std::vector<const Buf*> ins = OperandLeaves(instr);
      std::vector<Buf*> all = own();
      // The -start forms return (operands, results[, contexts]); the
      // results are the leaves after the operands.
      std::vector<Buf*> outs = all;
      bool start_form = op == Opcode::kAllGatherStart || op == Opcode::kCollectivePermuteStart;
      if (start_form) {
        if (all.size() < 2 * ins.size()) return Unsupported(instr, "start shape");
        outs.assign(all.begin() + ins.size(), all.begin() + 2 * ins.size());
        std::vector<Buf*> leaves;
        for (const auto* o : instr.operands()) for (Buf* b : Leaves(o)) leaves.push_back(b);
        leaves.insert(leaves.end(), all.begin() + ins.size(), all.end());
        values_[&instr] = leaves;
      }
      if (outs.size() < ins.size()) return Unsupported(instr, "collective shape");
      int64_t dim = instr.attrs().dimensions.empty() ? 0 : instr.attrs().dimensions[0];
      Opcode red = ReductionOf(instr);
      auto pairs = instr.attrs().source_target_pairs;
      auto groups = instr.attrs().replica_groups;
      std::vector<CollectiveCall> calls;
      for (const Buf* b : ins) calls.push_back(MakeCall(instr, b->type));
      // Scratch for the gathered / reduced whole.
      std::shared_ptr<std::vector<uint8_t>> scratch = std::make_shared<std::vector<uint8_t>>();
      auto reducer = std::make_shared<CrossRankReducer>(instr.to_apply());
      std::string desc = instr.Describe();
      plan.steps.push_back({instr.name(), [op, ins, outs, dim, red, pairs, groups, calls, scratch, reducer, desc](RunCtx& ctx) -> absl::Status {
        CollectiveOps* coll = ctx.opts->collectives;
        for (size_t i = 0; i < ins.size(); ++i) {
          const Buf& in = *ins[i];
          Buf& out = *outs[i];
          if (op == Opcode::kCollectivePermute || op == Opcode::kCollectivePermuteStart) {
            if (coll) {
              absl::Status s = coll->CollectivePermute(calls[i], pairs, in.data, out.data, out.bytes);
              if (!s.ok()) return s;
              continue;
            }
            bool self = false;
            for (auto& p : pairs) if (p.first == ctx.opts->replica_id && p.second == ctx.opts->replica_id) self = true;
            if (self) std::memcpy(out.data, in.data, out.bytes);
            else std::memset(out.data, 0, out.bytes);
            continue;
          }
          if (!coll || in.bytes == out.bytes) {
            if (in.bytes != out.bytes) {
              // The shapes fix the group size: an all-gather's output is
              // N inputs, a reduce-scatter's input N outputs.
              const int64_t ranks = std::max(in.bytes, out.bytes) / std::max<int64_t>(1, std::min(in.bytes, out.bytes));
              return absl::FailedPreconditionError(absl::StrCat(
                  "instruction ", desc, " needs several devices but runs on one (its replica group has ",
                  ranks, " members: run it as a job of ", ranks, " ranks, e.g. neuron-exec -r ", ranks, ")"));
            }
            if (!coll || op == Opcode::kAllToAll || op == Opcode::kCollectiveBroadcast) {
              std::memcpy(out.data, in.data, out.bytes);
              continue;
            }
          }
          if (op == Opcode::kAllToAll || op == Opcode::kCollectiveBroadcast)
            return absl::UnimplementedError(absl::StrCat("cross-device ", desc, " is not supported"));
          int64_t world = std::max(1, ctx.opts->replica_count);
          auto [pos, gsize] = GroupPosition(groups, ctx.opts->replica_id, world);
          if (op == Opcode::kAllGather || op == Opcode::kAllGatherStart) {
            scratch->resize(in.bytes * gsize + 1);
            absl::Status s = coll->AllGather(calls[i], in.data, scratch->data(), in.bytes);
            if (!s.ok()) return s;
            std::vector<Buf> parts(gsize, in);
            std::vector<const Buf*> pp;
            for (int64_t g = 0; g < gsize; ++g) { parts[g].data = scratch->data() + g * in.bytes; pp.push_back(&parts[g]); }
            Concatenate(pp, dim, out);
          } else {  // reduce-scatter: all-reduce then keep this member's block
            scratch->resize(in.bytes + 1);
            absl::Status s = CrossRankAllReduce(ctx, calls[i], red, *reducer, in, scratch->data());
            if (!s.ok()) return s;
            Buf whole = in;
            whole.data = scratch->data();
            std::vector<hlo::SliceDim> sl(in.rank());
            for (int64_t d = 0; d < in.rank(); ++d) sl[d] = {0, in.dims[d], 1};
            int64_t block = out.dims[dim];
            sl[dim] = {pos * block, (pos + 1) * block, 1};
            Slice(whole, sl, out);
          }
        }
        return absl::OkStatus();
      }, outs});
      return absl::OkStatus();
    }
    case Opcode::kRaggedAllToAll: {
      std::vector<const Buf*> ins = OperandLeaves(instr);
      Buf* out = own()[0];
      RaggedAllToAllOperands operands{ins[0], ins[1], ins[2], ins[3], ins[4]};
      CollectiveCall call = MakeCall(instr, ins[0]->type);
      plan.steps.push_back({instr.name(), [operands, out, call](RunCtx& ctx) -> absl::Status {
        const int64_t world = std::max(1, ctx.opts->replica_count);
        auto [pos, gsize] = GroupPosition(call.replica_groups, ctx.opts->replica_id, world);
        // Without the collectives engine the executor is one device.
        if (!ctx.opts->collectives) pos = 0, gsize = 1;
        return RaggedAllToAll(ctx.opts->collectives, call, pos, gsize, operands, *out);
      }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone: {
      const hlo::Shape& ts = instr.operand(0)->shape();
      const auto& in = Leaves(instr.operand(0));
      if (!ts.IsTuple() || ts.tuple.size() < 2) { alias_same(instr.operand(0)); return absl::OkStatus(); }
      int64_t first = LeafCount(ts.tuple[0]);
      values_[&instr] = std::vector<Buf*>(in.begin() + first, in.begin() + first + LeafCount(ts.tuple[1]));
      return absl::OkStatus();
    }
    case Opcode::kCopyStart: {
      // (destination, source, context): the destination is the copy.
      std::vector<Buf*> leaves = Leaves(instr.operand(0));
      std::vector<Buf*> src = leaves;
      leaves.insert(leaves.end(), src.begin(), src.end());
      if (shape.IsTuple() && shape.tuple.size() > 2)
        for (Buf* b : NewLeaves(shape.tuple[2], Buf::Role::kOwned)) leaves.push_back(b);
      values_[&instr] = leaves;
      return absl::OkStatus();
    }
    case Opcode::kCopyDone: {
      const hlo::Shape& ts = instr.operand(0)->shape();
      const auto& in = Leaves(instr.operand(0));
      int64_t n = ts.IsTuple() && !ts.tuple.empty() ? LeafCount(ts.tuple[0]) : static_cast<int64_t>(in.size());
      values_[&instr] = std::vector<Buf*>(in.begin(), in.begin() + n);
      return absl::OkStatus();
    }
    case Opcode::kRngBitGenerator:
    case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState:
      return kernel_step(PlanRng(instr));
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: {
      std::vector<const Buf*> ins = OperandLeaves(instr);
      std::vector<Buf*> outs = own();
      double eps = instr.attrs().epsilon;
      int64_t fi = instr.attrs().feature_index;
      if (fi < 0 || fi >= instr.operand(0)->shape().rank()) return Unsupported(instr, "feature_index");
      plan.steps.push_back({instr.name(), [op, eps, fi, ins, outs](RunCtx&) { BatchNorm(op, eps, fi, ins, outs); return absl::OkStatus(); }, outs});
      return absl::OkStatus();
    }
    case Opcode::kFft: {
      const Buf* in = Leaves(instr.operand(0))[0];
      Buf* out = own()[0];
      std::string type = instr.attrs().fft_type.empty() ? "FFT" : instr.attrs().fft_type;
      auto len = instr.attrs().fft_length;
      plan.steps.push_back({instr.name(), [in, out, type, len](RunCtx&) { Fft(*in, type, len, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kCholesky: {
      const Buf* a = Leaves(instr.operand(0))[0];
      Buf* out = own()[0];
      bool lower = instr.attrs().lower;
      plan.steps.push_back({instr.name(), [a, out, lower](RunCtx&) { Cholesky(*a, lower, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kRaggedDot: {
      const Buf* lhs = Leaves(instr.operand(0))[0];
      const Buf* rhs = Leaves(instr.operand(1))[0];
      const Buf* group_sizes = Leaves(instr.operand(2))[0];
      Buf* out = own()[0];
      hlo::DotDims dims = instr.attrs().dot.value_or(hlo::DotDims{});
      plan.steps.push_back({instr.name(), [lhs, rhs, group_sizes, dims, out](RunCtx&) {
        RaggedDot(*lhs, *rhs, *group_sizes, dims, *out);
        return absl::OkStatus();
      }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kTriangularSolve: {
      const Buf* a = Leaves(instr.operand(0))[0];
      const Buf* b = Leaves(instr.operand(1))[0];
      Buf* out = own()[0];
      TriangularSolveOptions o;
      o.left_side = instr.attrs().left_side;
      o.lower = instr.attrs().lower;
      o.unit_diagonal = instr.attrs().unit_diagonal;
      if (!instr.attrs().transpose_a.empty()) o.transpose_a = instr.attrs().transpose_a;
      plan.steps.push_back({instr.name(), [a, b, out, o](RunCtx&) { TriangularSolve(*a, *b, o, *out); return absl::OkStatus(); }, {out}});
      return absl::OkStatus();
    }
    case Opcode::kCustomCall: {
      const std::string& target = instr.attrs().custom_call_target;
      if (IsIdentityCustomCall(target)) {
        if (instr.operand_count() == 0) return Unsupported(instr, absl::StrCat("custom-call target '", target, "' without operands"));
        if (LeafCount(shape) != LeafCount(instr.operand(0)->shape()))
          return Unsupported(instr, absl::StrCat("custom-call target '", target, "' changing the shape"));
        const auto& in = Leaves(instr.operand(0));
        if (shape.IsArray() && in.size() == 1 && shape.dims != in[0]->dims) return alias_reshape(instr.operand(0));
        alias_same(instr.operand(0));
        return absl::OkStatus();
      }
      if (target == "GetRngSeed") {
        if (instr.operand_count() != 0 || !shape.IsArray() || shape.ElementCount() != 1 ||
            hlo::BitWidth(shape.type) != 64 || !hlo::IsInteger(shape.type))
          return Unsupported(instr, "GetRngSeed must return one 64-bit integer");
        Buf* out = own()[0];
        plan.steps.push_back({instr.name(), [out](RunCtx& ctx) { std::memcpy(out->data, &ctx.opts->rng_seed, 8); return absl::OkStatus(); }, {out}});
        return absl::OkStatus();
      }
      if (target == kDevicePrintTarget) {
        if (instr.operand_count() != 1 || !shape.IsArray() ||
            !instr.operand(0)->shape().Compatible(shape))
          return Unsupported(instr, "neuron.device_print takes one array and returns it unchanged");
        alias_same(instr.operand(0));
        const Buf* in = Leaves(instr.operand(0))[0];
        plan.steps.push_back({instr.name(), [in, prefix = DevicePrintPrefix(instr)](RunCtx& ctx) {
          if (ctx.opts->printer != nullptr)
            ctx.opts->printer->Print({prefix, in->type, in->dims, in->data, in->bytes});
          return absl::OkStatus();
        }, {}});
        return absl::OkStatus();
      }
      return kernel_step(PlanCustomCall(instr));
    }
    default:
      break;
  }
  return Unsupported(instr, absl::StrCat("operator '", instr.opcode_text().empty() ? std::string(hlo::OpcodeName(op)) : instr.opcode_text(), "'"));
}

}  // namespace neuron::kernels
