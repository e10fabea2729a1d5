#include "lib/compiler/buffer_assignment.h"

#include <algorithm>
#include <map>
#include <unordered_map>

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
// runs as one pass over its lanes: its values never leave registers.
bool IsElementwiseFusion(const hlo::Computation& comp) {
  for (const Instruction* inst : comp.instructions()) {
    const Opcode op = inst->opcode();
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

// The scratch peak of one computation over its post order: its parameters
// are its caller's buffers and the values its root returns are the
// caller's result buffers, so neither counts. While an instruction runs a
// callee, the callee's own peak is live on top of everything live then.
// Slots are recorded for `slots` (the entry's) when given.
int64_t SimulateComputation(const hlo::Computation& comp,
                            std::unordered_map<const hlo::Computation*, int64_t>& peaks,
                            std::vector<BufferSlot>* slots, int depth = 0) {
  auto known = peaks.find(&comp);
  if (known != peaks.end()) return known->second;
  peaks[&comp] = 0;  // a cycle (invalid HLO) counts nothing more
  std::vector<Instruction*> schedule = comp.PostOrder();
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < schedule.size(); ++i) position[schedule[i]] = i;
  std::vector<const Instruction*> outputs_of_root;
  std::vector<const Instruction*> stack = {comp.root()};
  while (!stack.empty()) {
    const Instruction* v = stack.back();
    stack.pop_back();
    if (!v) continue;
    if (v->opcode() == Opcode::kTuple) {
      for (const Instruction* o : v->operands()) stack.push_back(o);
    } else {
      outputs_of_root.push_back(v);
    }
  }
  // Last use, following views back to the buffers they read.
  std::unordered_map<const Instruction*, size_t> last_use;
  for (const Instruction* inst : schedule) {
    size_t at = position[inst];
    std::vector<const Instruction*> reads(inst->operands().begin(), inst->operands().end());
    while (!reads.empty()) {
      const Instruction* r = reads.back();
      reads.pop_back();
      last_use[r] = std::max(last_use[r], at);
      if (r->opcode() == Opcode::kGetTupleElement || r->opcode() == Opcode::kTuple || r->opcode() == Opcode::kBitcast) {
        for (const Instruction* o : r->operands()) reads.push_back(o);
      }
    }
  }
  Arena arena;
  int64_t peak = 0;
  std::vector<BufferSlot> local;
  std::vector<std::vector<size_t>> frees_at(schedule.size() + 1);
  for (const Instruction* inst : schedule) {
    size_t at = position[inst];
    if (!IsView(*inst) && std::find(outputs_of_root.begin(), outputs_of_root.end(), inst) == outputs_of_root.end()) {
      int64_t size = Align(ShapeBytes(inst->shape()));
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
        if (c) callee_peak = std::max(callee_peak, SimulateComputation(*c, peaks, nullptr, depth + 1));
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
  out.memory.scratch_peak = SimulateComputation(*entry, peaks, &out.slots);
  out.memory.total = out.memory.constants + out.memory.inputs + out.memory.outputs + out.memory.scratch_peak;
  return out;
}

}  // namespace neuron::compiler
