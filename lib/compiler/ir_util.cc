#include "lib/compiler/ir_util.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "lib/kernels/support.h"

namespace neuron::compiler {

using hlo::Instruction;
using hlo::Opcode;

NameUniquer::NameUniquer(const hlo::Module& module) {
  for (const hlo::Computation* c : module.computations()) {
    used_.insert(c->name());
    for (const Instruction* inst : c->instructions()) used_.insert(inst->name());
  }
}

std::string NameUniquer::Get(std::string_view base) {
  // Resume counting where this base left off: probing from 1 every time
  // would make naming quadratic in the number of fusions.
  // Debian's Abseil has its own string_view type.
  const absl::string_view b(base.data(), base.size());
  auto it = next_.find(b);
  if (it == next_.end()) it = next_.emplace(std::string(base), 0).first;
  int64_t& n = it->second;
  for (;;) {
    std::string candidate = absl::StrCat(b, ".", ++n);
    if (used_.insert(candidate).second) return candidate;
  }
}

Instruction* AddInstruction(hlo::Computation* comp, Opcode op, std::string name, hlo::Shape shape,
                            const std::vector<Instruction*>& operands) {
  auto inst = std::make_unique<Instruction>(op, std::move(name), std::move(shape));
  for (Instruction* o : operands) inst->AddOperand(o);
  return comp->AddInstruction(std::move(inst));
}

Instruction* AddParameter(hlo::Computation* comp, int64_t number, std::string name, hlo::Shape shape) {
  auto inst = std::make_unique<Instruction>(Opcode::kParameter, std::move(name), std::move(shape));
  inst->attrs().parameter_number = number;  // before adding: the computation indexes it
  return comp->AddInstruction(std::move(inst));
}

Instruction* AddScalarConstant(hlo::Computation* comp, NameUniquer& names, hlo::ElementType type,
                               double value) {
  hlo::Shape shape = hlo::Shape::Scalar(type);
  Instruction* c = AddInstruction(comp, Opcode::kConstant, names.Get("constant"), shape);
  hlo::Literal lit = hlo::Literal::Zeros(shape);
  lit.SetDouble(0, value);
  c->attrs().literal = std::move(lit);
  return c;
}

Instruction* CloneInstruction(const Instruction& inst, hlo::Computation* comp, std::string name,
                              const std::vector<Instruction*>& operands) {
  auto copy = std::make_unique<Instruction>(inst.opcode(), std::move(name), inst.shape());
  copy->set_opcode_text(inst.opcode_text());
  copy->attrs() = inst.attrs();
  copy->set_called_computations(inst.called_computations());
  for (Instruction* o : operands) copy->AddOperand(o);
  return comp->AddInstruction(std::move(copy));
}

hlo::Instruction* AddReduceBroadcast(hlo::Computation* comp, NameUniquer& names, hlo::Instruction* x,
                                     int64_t dim, hlo::Computation* reducer, double init) {
  const hlo::Shape& s = x->shape();
  hlo::Shape reduced = hlo::Shape::Array(s.type, {});
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (d == dim) continue;
    reduced.dims.push_back(s.dims[d]);
    kept.push_back(d);
  }
  hlo::Instruction* init_value = AddScalarConstant(comp, names, s.type, init);
  hlo::Instruction* r = AddInstruction(comp, Opcode::kReduce, names.Get("reduce"), reduced, {x, init_value});
  r->attrs().dimensions = {dim};
  r->attrs().has_dimensions = true;
  r->AddCalledComputation(reducer);
  hlo::Instruction* b =
      AddInstruction(comp, Opcode::kBroadcast, names.Get("broadcast"), hlo::Shape::Array(s.type, s.dims), {r});
  b->attrs().dimensions = kept;
  b->attrs().has_dimensions = true;
  return b;
}

hlo::Computation* AddScalarReducer(hlo::Module& module, NameUniquer& names, Opcode op,
                                   hlo::ElementType type) {
  auto comp = std::make_unique<hlo::Computation>(names.Get(std::string(hlo::OpcodeName(op)) + "_reducer"));
  hlo::Shape s = hlo::Shape::Scalar(type);
  Instruction* a = AddParameter(comp.get(), 0, names.Get("lhs"), s);
  Instruction* b = AddParameter(comp.get(), 1, names.Get("rhs"), s);
  Instruction* root = AddInstruction(comp.get(), op, names.Get("reduced"), s, {a, b});
  comp->set_root(root);
  return module.AddComputation(std::move(comp));
}

bool HasAnyOpcode(const hlo::Module& module, std::initializer_list<hlo::Opcode> ops) {
  for (const hlo::Computation* c : module.computations())
    for (const hlo::Instruction* inst : c->instructions())
      for (hlo::Opcode op : ops)
        if (inst->opcode() == op) return true;
  return false;
}

bool IsSimpleReducer(const hlo::Computation& reducer) {
  const hlo::Instruction* root = reducer.root();
  if (root == nullptr || root->operand_count() != 2 || !root->shape().IsScalar()) return false;
  switch (root->opcode()) {
    case hlo::Opcode::kAdd: case hlo::Opcode::kMultiply: case hlo::Opcode::kMaximum:
    case hlo::Opcode::kMinimum: case hlo::Opcode::kAnd: case hlo::Opcode::kOr:
      break;
    default:
      return false;
  }
  const hlo::Instruction* a = root->operand(0);
  const hlo::Instruction* b = root->operand(1);
  return a->opcode() == hlo::Opcode::kParameter && b->opcode() == hlo::Opcode::kParameter &&
         a->attrs().parameter_number != b->attrs().parameter_number &&
         reducer.parameters().size() == 2;
}

bool HasSideEffect(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kUnknown:
      return true;
    case Opcode::kCustomCall:
      // A device print is its output, even when nothing reads its result.
      return inst.attrs().custom_call_has_side_effect ||
             inst.attrs().custom_call_target == kernels::kDevicePrintTarget;
    default:
      return hlo::IsCollective(inst.opcode());
  }
}

size_t RemoveDeadInstructions(hlo::Computation* comp) {
  size_t removed = 0;
  // Users before operands, so one sweep removes whole dead chains.
  std::vector<Instruction*> order = comp->PostOrder();
  std::unordered_set<Instruction*> has_control_successor;
  for (Instruction* inst : order) {
    for (Instruction* pred : inst->control_predecessors()) has_control_successor.insert(pred);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction* inst = *it;
    if (inst == comp->root() || !inst->users().empty() || HasSideEffect(*inst) ||
        has_control_successor.count(inst) || !inst->control_predecessors().empty()) {
      continue;
    }
    if (comp->RemoveInstruction(inst).ok()) ++removed;
  }
  return removed;
}

void CompactModule(hlo::Module& module) {
  // Computations reachable from the entry.
  std::unordered_set<const hlo::Computation*> reachable;
  std::vector<const hlo::Computation*> stack = {module.entry()};
  while (!stack.empty()) {
    const hlo::Computation* c = stack.back();
    stack.pop_back();
    if (!c || !reachable.insert(c).second) continue;
    for (const Instruction* inst : c->instructions()) {
      for (const hlo::Computation* callee : inst->called_computations()) stack.push_back(callee);
    }
  }
  std::vector<hlo::Computation*> keep;  // callees first
  for (hlo::Computation* c : module.PostOrder()) {
    if (!reachable.count(c)) continue;
    keep.push_back(c);
    // Live: reachable from the root through operands and control edges,
    // plus side-effecting instructions and every parameter.
    absl::flat_hash_set<const Instruction*> live;
    std::vector<const Instruction*> work;
    for (const Instruction* inst : c->instructions()) {
      if (inst == c->root() || HasSideEffect(*inst)) work.push_back(inst);
    }
    while (!work.empty()) {
      const Instruction* inst = work.back();
      work.pop_back();
      if (!live.insert(inst).second) continue;
      for (const Instruction* o : inst->operands()) work.push_back(o);
      for (const Instruction* p : inst->control_predecessors()) work.push_back(p);
    }
    std::vector<Instruction*> order = c->PostOrder();
    std::erase_if(order, [&](const Instruction* inst) { return !live.contains(inst); });
    c->RetainInstructions(order);
  }
  module.RetainComputations(keep);
}

std::optional<double> SplatValue(const Instruction& inst) {
  const Instruction* c = &inst;
  if (c->opcode() == Opcode::kBroadcast && c->operand_count() == 1 && c->operand(0)->shape().IsScalar()) {
    c = c->operand(0);
  }
  if (c->opcode() != Opcode::kConstant || !c->attrs().literal) return std::nullopt;
  const hlo::Literal& lit = *c->attrs().literal;
  if (!lit.shape().IsArray() || lit.elided() || hlo::IsComplex(lit.shape().type)) return std::nullopt;
  int64_t n = lit.element_count();
  if (n == 0 || n > 1 << 16) return std::nullopt;
  double v = lit.GetDouble(0);
  for (int64_t i = 1; i < n; ++i) {
    if (lit.GetDouble(i) != v) return std::nullopt;
  }
  return v;
}

std::unordered_set<const hlo::Computation*> EmbeddedComputations(const hlo::Module& module) {
  std::unordered_set<const hlo::Computation*> out;
  for (const hlo::Computation* c : module.computations()) {
    for (const Instruction* inst : c->instructions()) {
      switch (inst->opcode()) {
        case Opcode::kWhile:
        case Opcode::kConditional:
        case Opcode::kCall:
        case Opcode::kAsyncStart:
          break;  // sequential bodies: regular code
        default:
          for (const hlo::Computation* callee : inst->called_computations()) out.insert(callee);
      }
    }
  }
  return out;
}

}  // namespace neuron::compiler
