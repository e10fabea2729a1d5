#include "lib/compiler/buffer_assignment.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "lib/compiler/ir_util.h"
#include "lib/hlo/input_output_alias.h"
#include "lib/program/dtype.h"

namespace neuron::compiler {

using hlo::Instruction;
using hlo::Opcode;

int64_t ShapeBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const hlo::Shape& e : shape.tuple) {
      int64_t b = ShapeBytes(e);
      if (b > INT64_MAX - total) return 0;
      total += b;
    }
    return total;
  }
  return program::ArrayBytes(shape).value_or(0);
}

namespace {

bool IsView(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kBitcast:
      return true;
    default:
      return false;
  }
}

// First-fit allocator over a free list of [offset, size) holes.
class Arena {
 public:
  int64_t Allocate(int64_t size) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= size) {
        int64_t offset = it->first;
        int64_t rest = it->second - size;
        free_.erase(it);
        if (rest > 0) free_[offset + size] = rest;
        return offset;
      }
    }
    int64_t offset = top_;
    top_ += size;
    return offset;
  }
  void Free(int64_t offset, int64_t size) {
    auto [it, inserted] = free_.emplace(offset, size);
    // Merge with the next and previous holes.
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
        it = prev;
      }
    }
    // A hole at the top shrinks the arena back.
    if (it->first + it->second == top_) {
      top_ = it->first;
      free_.erase(it);
    }
  }
  int64_t top() const { return top_; }

 private:
  std::map<int64_t, int64_t> free_;
  int64_t top_ = 0;
};

int64_t Align(int64_t n) { return (n + 63) / 64 * 64; }

// An elementwise fusion (reshapes included: they keep the element order)
// runs as one pass over its lanes: its values never leave registers. So
// does a reduction of elementwise work by a simple reducer (an input
// fusion), slice by slice in the runtime's bounded scratch.
bool IsElementwiseFusion(const hlo::Computation& comp) {
  const Instruction* root = comp.root();
  const bool reduce_root = root != nullptr && root->opcode() == Opcode::kReduce && root->operand_count() == 2 &&
                           root->to_apply() != nullptr && IsSimpleReducer(*root->to_apply());
  for (const Instruction* inst : comp.instructions()) {
    const Opcode op = inst->opcode();
    if (reduce_root && inst == root) continue;
    if (op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple ||
        op == Opcode::kBroadcast || op == Opcode::kReshape || op == Opcode::kBitcast ||
        hlo::IsElementwise(op))
      continue;
    return false;
  }
  return true;
}

// Computations that run as steps of their caller and keep buffers of their
// own while they run: a call's callee, a loop's body and condition, a
// conditional's branches, a fusion that is more than elementwise work (a
// reduction or a dot inside one materializes its values). A reduction's or
// sort's scalar computation keeps none.
bool CalleesHoldBuffers(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kAsyncStart:
      return true;
    case Opcode::kFusion:
      return inst.to_apply() && !IsElementwiseFusion(*inst.to_apply());
    default:
      return false;
  }
}

// Follows views (bitcasts, a tuple's elements read back) to the
// instruction whose buffer holds a value.
const Instruction* DefiningBuffer(const Instruction* v) {
  for (int guard = 0; v != nullptr && guard < 1000; ++guard) {
    if (v->opcode() == Opcode::kBitcast && v->operand_count() == 1) {
      v = v->operand(0);
    } else if (v->opcode() == Opcode::kGetTupleElement && v->operand(0)->opcode() == Opcode::kTuple &&
               v->attrs().tuple_index >= 0 &&
               v->attrs().tuple_index < static_cast<int64_t>(v->operand(0)->operand_count())) {
      v = v->operand(0)->operand(v->attrs().tuple_index);
    } else {
      return v;
    }
  }
  return v;
}

// `v` (through bitcasts) is element i of the computation's parameter: a
// loop body's state element i as it came in.
bool IsStateElement(const Instruction* v, size_t i) {
  v = DefiningBuffer(v);
  return v->opcode() == Opcode::kGetTupleElement && v->attrs().tuple_index == static_cast<int64_t>(i) &&
         v->operand(0)->opcode() == Opcode::kParameter;
}

// The body's result i is its parameter's element i, unchanged.
bool LoopPassesThrough(const hlo::Computation& body, size_t i) {
  const Instruction* root = body.root();
  return root != nullptr && root->opcode() == Opcode::kTuple && i < root->operand_count() &&
         IsStateElement(root->operand(i), i);
}

// Bytes a loop's state needs of its own, as the runtime keeps it: an
// element the body passes through is its init value itself; one whose init
// value is a buffer of this computation that nothing reads once the loop
// starts takes that buffer over; every other element is a copy.
int64_t LoopStateCopyBytes(const Instruction& loop, size_t at,
                           const std::unordered_map<const Instruction*, size_t>& last_use) {
  const hlo::Shape& shape = loop.shape();
  const hlo::Computation* body = loop.while_body();
  if (!shape.IsTuple() || body == nullptr || loop.operand_count() != 1) return ShapeBytes(shape);
  const Instruction* init = loop.operand(0);
  std::unordered_map<const Instruction*, int> uses;
  if (init->opcode() == Opcode::kTuple)
    for (const Instruction* o : init->operands()) ++uses[DefiningBuffer(o)];
  int64_t copies = 0;
  for (size_t i = 0; i < shape.tuple.size(); ++i) {
    if (LoopPassesThrough(*body, i)) continue;
    if (init->opcode() == Opcode::kTuple && i < init->operand_count()) {
      const Instruction* source = DefiningBuffer(init->operand(i));
      auto last = last_use.find(source);
      if (!IsView(*source) && uses[source] == 1 && last != last_use.end() && last->second <= at) continue;
    }
    copies += Align(ShapeBytes(shape.tuple[i]));
  }
  return copies;
}

// The scratch peak of one computation over its post order: its parameters
// are its caller's buffers and the values its root returns are the
// caller's result buffers, so neither counts. While an instruction runs a
// callee, the callee's own peak is live on top of everything live then.
// Slots are recorded for `slots` (the entry's) when given.
int64_t SimulateComputation(const hlo::Computation& comp,
                            const std::unordered_set<const hlo::Computation*>& loop_bodies,
                            std::unordered_map<const hlo::Computation*, int64_t>& peaks,
                            std::vector<BufferSlot>* slots, int depth = 0) {
  auto known = peaks.find(&comp);
  if (known != peaks.end()) return known->second;
  peaks[&comp] = 0;  // a cycle (invalid HLO) counts nothing more
  std::vector<Instruction*> schedule = comp.PostOrder();
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < schedule.size(); ++i) position[schedule[i]] = i;
  // Results the caller holds: the entry's outputs, a call's results. A loop
  // body's results are its own buffers, copied into the loop state after
  // each trip, except an update of the state element of the same position,
  // which is made in place.
  std::vector<const Instruction*> outputs_of_root;
  std::vector<const Instruction*> stack = {comp.root()};
  const bool loop_body = loop_bodies.count(&comp) > 0;
  while (!stack.empty()) {
    const Instruction* v = stack.back();
    stack.pop_back();
    if (!v) continue;
    if (v->opcode() == Opcode::kTuple && (!loop_body || v == comp.root())) {
      for (const Instruction* o : v->operands()) stack.push_back(o);
    } else if (!loop_body) {
      outputs_of_root.push_back(v);
    }
  }
  if (loop_body && comp.root() != nullptr && comp.root()->opcode() == Opcode::kTuple) {
    const Instruction* root = comp.root();
    for (size_t i = 0; i < root->operand_count(); ++i) {
      const Instruction* r = root->operand(i);
      if (r->opcode() == Opcode::kDynamicUpdateSlice && IsStateElement(r->operand(0), i))
        outputs_of_root.push_back(r);
    }
  }
  // Last use, following views back to the buffers they read (and, with
  // `through_loops`, a loop's result back to the init values it may hold).
  std::unordered_map<const Instruction*, size_t> last_use;
  auto read_at = [&last_use](std::vector<const Instruction*> reads, size_t at, bool through_loops) {
    while (!reads.empty()) {
      const Instruction* r = reads.back();
      reads.pop_back();
      last_use[r] = std::max(last_use[r], at);
      const Opcode op = r->opcode();
      if (op == Opcode::kGetTupleElement || op == Opcode::kTuple || op == Opcode::kBitcast ||
          (through_loops && op == Opcode::kWhile)) {
        for (const Instruction* o : r->operands()) reads.push_back(o);
      }
    }
  };
  for (const Instruction* inst : schedule)
    read_at({inst->operands().begin(), inst->operands().end()}, position[inst], false);
  // Decided on the reads alone: which loop states take over their init
  // values' buffers. Reading a loop's result then reads those buffers (and
  // the pass-through values) too, so they live as long as the result.
  std::unordered_map<const Instruction*, int64_t> loop_copies;
  for (const Instruction* inst : schedule)
    if (inst->opcode() == Opcode::kWhile) loop_copies[inst] = LoopStateCopyBytes(*inst, position[inst], last_use);
  for (auto it = schedule.rbegin(); it != schedule.rend(); ++it) {
    const Instruction* inst = *it;
    if (inst->opcode() != Opcode::kWhile || inst->operand_count() != 1) continue;
    auto read = last_use.find(inst);
    if (read != last_use.end()) read_at({inst->operand(0)}, read->second, true);
  }
  Arena arena;
  int64_t peak = 0;
  std::vector<BufferSlot> local;
  std::vector<std::vector<size_t>> frees_at(schedule.size() + 1);
  for (const Instruction* inst : schedule) {
    size_t at = position[inst];
    if (!IsView(*inst) && std::find(outputs_of_root.begin(), outputs_of_root.end(), inst) == outputs_of_root.end()) {
      auto loop = loop_copies.find(inst);
      int64_t size = loop != loop_copies.end() ? loop->second : Align(ShapeBytes(inst->shape()));
      if (size > 0) {
        BufferSlot slot{inst, arena.Allocate(size), size, at, std::max(last_use[inst], at)};
        frees_at[slot.last_use].push_back(local.size());
        local.push_back(slot);
        peak = std::max(peak, arena.top());
      }
    }
    if (CalleesHoldBuffers(*inst) && depth < 64) {
      int64_t callee_peak = 0;
      for (const hlo::Computation* c : inst->called_computations())
        if (c) callee_peak = std::max(callee_peak, SimulateComputation(*c, loop_bodies, peaks, nullptr, depth + 1));
      if (callee_peak > 0) {
        const int64_t offset = arena.Allocate(callee_peak);
        peak = std::max(peak, arena.top());
        arena.Free(offset, callee_peak);
      }
    }
    for (size_t index : frees_at[at]) arena.Free(local[index].offset, local[index].size);
  }
  peaks[&comp] = peak;
  if (slots) *slots = std::move(local);
  return peak;
}

}  // namespace

BufferAssignment AssignBuffers(const hlo::Module& module) {
  BufferAssignment out;
  for (const hlo::Computation* c : module.computations()) {
    for (const Instruction* inst : c->instructions()) {
      if (inst->opcode() == Opcode::kConstant) out.memory.constants += ShapeBytes(inst->shape());
    }
  }
  const hlo::Computation* entry = module.entry();
  if (!entry) return out;
  for (const Instruction* p : entry->parameters()) {
    if (p) out.memory.inputs += ShapeBytes(p->shape());
  }
  out.memory.outputs = entry->root() ? ShapeBytes(entry->root()->shape()) : 0;
  std::unordered_map<const hlo::Computation*, int64_t> peaks;
  std::unordered_set<const hlo::Computation*> loop_bodies;
  for (const hlo::Computation* c : module.computations())
    for (const Instruction* inst : c->instructions())
      if (inst->opcode() == Opcode::kWhile && inst->while_body() != nullptr) loop_bodies.insert(inst->while_body());
  out.memory.scratch_peak = SimulateComputation(*entry, loop_bodies, peaks, &out.slots);
  // Donated inputs (input_output_alias): an output that can be written in
  // its input's buffer takes no bytes of its own. One that cannot is read
  // from a copy of the input instead, which costs what the output would.
  for (const hlo::InputOutputAlias& a : module.config().input_output_alias) {
    if (entry->root() == nullptr || !hlo::AliasRunsInPlace(*entry, a)) continue;
    if (const hlo::Shape* shape = entry->root()->shape().Subshape(a.output_index)) {
      out.memory.aliased += ShapeBytes(*shape);
    }
  }
  out.memory.total = out.memory.constants + out.memory.inputs + out.memory.outputs - out.memory.aliased +
                     out.memory.scratch_peak;
  return out;
}

}  // namespace neuron::compiler
