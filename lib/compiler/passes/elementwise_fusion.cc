// Elementwise (kLoop) fusion, as XLA's own: an elementwise consumer absorbs
// its elementwise, broadcast, reshape, convert, iota and small-constant
// producers into a `fusion` instruction whose fused computation the
// executor evaluates in one pass over the output, so intermediates are never
// written to memory. A producer is absorbed only when all its users are in
// the same fusion, except cheap ones (broadcasts, constants, iota), which
// are duplicated rather than materialized. A reduce with a simple reducer
// is a root too: its operand's producers fuse into it (XLA's input
// fusion). With fuse_reduce_producers (O3, transformer) a reduce feeding
// only the fusion is absorbed into its consumer instead.
#include <algorithm>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kMaxFusedConstantElements = 1024;

bool Plain(const Instruction& inst) {
  return inst.shape().IsArray() && !HasSideEffect(inst) && inst.control_predecessors().empty();
}

// A one-operand reduce by a simple reducer: its operand's elementwise
// producers fuse into it (an input fusion), evaluated slice by slice
// while it reduces, so the reduced value is never materialized.
bool IsReduceRoot(const Instruction& inst) {
  if (inst.opcode() != Opcode::kReduce || inst.operand_count() != 2 || !Plain(inst) ||
      inst.to_apply() == nullptr || !IsSimpleReducer(*inst.to_apply()))
    return false;
  const hlo::Shape& value = inst.operand(0)->shape();
  if (!value.IsArray() || value.rank() == 0 || hlo::IsComplex(value.type) || value.type == hlo::ElementType::kU64)
    return false;
  const Opcode op = inst.to_apply()->root()->opcode();
  const bool logical = op == Opcode::kAnd || op == Opcode::kOr;
  return !logical || !hlo::IsFloatingPoint(value.type);
}

bool IsFusibleRoot(const Instruction& inst) {
  if (IsReduceRoot(inst)) return true;
  return Plain(inst) && hlo::IsElementwise(inst.opcode()) && inst.opcode() != Opcode::kRng;
}

bool IsCheap(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kIota:
      return true;
    case Opcode::kConstant: {
      std::optional<int64_t> n = inst.shape().ElementCount();
      return n && *n <= kMaxFusedConstantElements;
    }
    default:
      return false;
  }
}

// A broadcast of more than one element: its source is not a splat.
bool BroadcastsComputedValues(const Instruction& inst) {
  if (inst.opcode() != Opcode::kBroadcast) return false;
  std::optional<int64_t> n = inst.operand(0)->shape().ElementCount();
  return !n || *n > 1;
}

class ElementwiseFusion : public Pass {
 public:
  explicit ElementwiseFusion(FusionConfig config) : config_(config) {}
  std::string_view Name() const override { return config_.name; }

  absl::StatusOr<bool> Run(hlo::Module& module) override {
    NameUniquer names(module);
    std::unordered_set<const hlo::Computation*> embedded = EmbeddedComputations(module);
    bool changed = false;
    for (hlo::Computation* c : module.computations()) {
      if (embedded.count(c) || c->is_fusion_computation()) continue;
      changed |= FuseComputation(module, c, names);
    }
    return changed;
  }

 private:
  bool IsFusibleProducer(const Instruction& inst) const {
    if (!Plain(inst)) return false;
    if (IsCheap(inst)) return true;
    switch (inst.opcode()) {
      case Opcode::kReshape:
      case Opcode::kConvert:
        return true;
      case Opcode::kReduce:
        return config_.fuse_reduce_producers && inst.operand_count() == 2;
      default:
        return hlo::IsElementwise(inst.opcode()) && inst.opcode() != Opcode::kRng;
    }
  }

  struct Cluster {
    Instruction* root;
    absl::flat_hash_set<Instruction*> members;     // moved into the fusion
    absl::flat_hash_set<Instruction*> duplicates;  // copied; originals stay
  };

  bool FuseComputation(hlo::Module& module, hlo::Computation* c, NameUniquer& names) {
    std::vector<Instruction*> order = c->PostOrder();
    absl::flat_hash_map<Instruction*, size_t> position;
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    absl::flat_hash_set<Instruction*> taken;
    std::vector<Cluster> clusters;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* root = *it;
      if (taken.count(root) || !IsFusibleRoot(*root)) continue;
      Cluster cl{root, {root}, {}};
      // Producers come before their users in the schedule, so visiting
      // candidates from the latest position down decides each one after
      // all of its users: it joins when they all joined.
      std::priority_queue<std::pair<size_t, Instruction*>> candidates;
      absl::flat_hash_set<Instruction*> queued;
      auto push_operands = [&](Instruction* m) {
        for (Instruction* o : m->operands()) {
          if (queued.insert(o).second) candidates.push({position[o], o});
        }
      };
      push_operands(root);
      while (!candidates.empty()) {
        Instruction* o = candidates.top().second;
        candidates.pop();
        if (taken.count(o) || !IsFusibleProducer(*o)) continue;
        bool all_users_in = std::all_of(o->users().begin(), o->users().end(),
                                        [&](Instruction* u) { return cl.members.count(u) > 0; });
        if (all_users_in && o != c->root()) {
          cl.members.insert(o);
          // The executor's one pass reads a broadcast's source by index
          // only when that source is a fusion parameter: the values it
          // spreads (a norm's per-channel scale, say) are computed outside.
          if (!BroadcastsComputedValues(*o)) push_operands(o);
        } else if (IsCheap(*o)) {
          cl.duplicates.insert(o);
        }
      }
      // A duplicate that became a full member is no longer a duplicate.
      for (Instruction* m : cl.members) cl.duplicates.erase(m);
      if (cl.members.size() + cl.duplicates.size() < 2) continue;
      // Nothing to gain from wrapping a lone op with a copied constant.
      if (cl.members.size() == 1 && std::all_of(cl.duplicates.begin(), cl.duplicates.end(), [](Instruction* d) {
            return d->opcode() == Opcode::kConstant;
          })) {
        continue;
      }
      // A reduce gains only from work on its operand, not from its init.
      if (root->opcode() == Opcode::kReduce &&
          std::all_of(cl.members.begin(), cl.members.end(), [&](Instruction* m) {
            return m == root || m->opcode() == Opcode::kConstant;
          }) &&
          std::all_of(cl.duplicates.begin(), cl.duplicates.end(), [](Instruction* d) {
            return d->opcode() == Opcode::kConstant;
          })) {
        continue;
      }
      for (Instruction* m : cl.members) taken.insert(m);
      clusters.push_back(std::move(cl));
    }
    for (Cluster& cl : clusters) BuildFusion(module, c, cl, order, position, names);
    return !clusters.empty();
  }

  void BuildFusion(hlo::Module& module, hlo::Computation* c, const Cluster& cl,
                   const std::vector<Instruction*>& order,
                   absl::flat_hash_map<Instruction*, size_t>& position, NameUniquer& names) {
    std::vector<Instruction*> inside;
    for (Instruction* m : cl.members) inside.push_back(m);
    for (Instruction* d : cl.duplicates) inside.push_back(d);
    std::sort(inside.begin(), inside.end(),
              [&](Instruction* a, Instruction* b) { return position[a] < position[b]; });
    auto fused = std::make_unique<hlo::Computation>(names.Get("fused_computation"));
    fused->set_is_fusion_computation(true);
    absl::flat_hash_map<Instruction*, Instruction*> clone_of;
    absl::flat_hash_map<Instruction*, Instruction*> param_of;
    std::vector<Instruction*> fusion_operands;
    auto param_for = [&](Instruction* outside) {
      auto found = param_of.find(outside);
      if (found != param_of.end()) return found->second;
      Instruction* p = AddParameter(fused.get(), static_cast<int64_t>(fusion_operands.size()),
                                    names.Get("param"), outside->shape());
      fusion_operands.push_back(outside);
      param_of[outside] = p;
      return p;
    };
    for (Instruction* m : inside) {
      std::vector<Instruction*> operands;
      for (Instruction* o : m->operands()) {
        auto found = clone_of.find(o);
        operands.push_back(found != clone_of.end() ? found->second : param_for(o));
      }
      clone_of[m] = CloneInstruction(*m, fused.get(), names.Get(m->name()), operands);
    }
    fused->set_root(clone_of.at(cl.root));
    hlo::Computation* body = module.AddComputation(std::move(fused));
    Instruction* fusion = AddInstruction(c, Opcode::kFusion, names.Get("fusion"), cl.root->shape(), fusion_operands);
    fusion->attrs().fusion_kind = cl.root->opcode() == Opcode::kReduce ? "kInput" : "kLoop";
    fusion->attrs().metadata = cl.root->attrs().metadata;
    fusion->AddCalledComputation(body);
    position[fusion] = position[cl.root];
    cl.root->ReplaceAllUsesWith(fusion);
    (void)order;
  }

  FusionConfig config_;
};

}  // namespace

std::unique_ptr<Pass> MakeElementwiseFusionPass(FusionConfig config) {
  return std::make_unique<ElementwiseFusion>(config);
}

}  // namespace neuron::compiler
