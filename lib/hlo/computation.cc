#include "lib/hlo/computation.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"

namespace neuron::hlo {

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  Instruction* raw = instruction.get();
  raw->parent_ = this;
  instructions_.push_back(std::move(instruction));
  if (raw->opcode() == Opcode::kParameter) {
    int64_t n = raw->attrs().parameter_number;
    // Guard against absurd numbers from damaged input: index only sane ones.
    if (n >= 0 && n < (int64_t{1} << 20)) {
      if (parameters_.size() <= static_cast<size_t>(n)) parameters_.resize(n + 1, nullptr);
      if (!parameters_[n]) parameters_[n] = raw;
    }
  }
  return raw;
}

absl::Status Computation::RemoveInstruction(Instruction* instruction) {
  if (!instruction->users().empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot remove '%s': it still has %d users", instruction->name(),
        instruction->users().size()));
  }
  if (instruction == root_) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot remove '%s': it is the root", instruction->name()));
  }
  for (auto& p : parameters_) {
    if (p == instruction) p = nullptr;
  }
  instruction->ClearOperands();
  for (auto& other : instructions_) {
    auto& preds = other->control_predecessors_;
    preds.erase(std::remove(preds.begin(), preds.end(), instruction), preds.end());
  }
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& p) { return p.get() == instruction; });
  if (it == instructions_.end()) {
    return absl::NotFoundError(absl::StrFormat(
        "'%s' is not in computation '%s'", instruction->name(), name_));
  }
  instructions_.erase(it);
  return absl::OkStatus();
}

void Computation::RetainInstructions(const std::vector<Instruction*>& keep) {
  absl::flat_hash_set<const Instruction*> kept(keep.begin(), keep.end());
  // Release the kept ones; the others are destroyed with the old vector.
  for (auto& p : instructions_) {
    if (kept.contains(p.get())) (void)p.release();
  }
  std::vector<std::unique_ptr<Instruction>> old = std::move(instructions_);
  instructions_.clear();
  instructions_.reserve(keep.size());
  parameters_.clear();
  for (Instruction* inst : keep) inst->users_.clear();
  for (Instruction* inst : keep) {
    // Each instruction's users entries are pushed together, so a repeated
    // operand shows up as the last user: the same dedup AddOperand does.
    for (Instruction* o : inst->operands_) {
      if (o->users_.empty() || o->users_.back() != inst) o->users_.push_back(inst);
    }
    AddInstruction(std::unique_ptr<Instruction>(inst));
  }
  old.clear();
}

std::vector<Instruction*> Computation::instructions() const {
  std::vector<Instruction*> out;
  out.reserve(instructions_.size());
  for (const auto& p : instructions_) out.push_back(p.get());
  return out;
}

Instruction* Computation::Find(std::string_view name) const {
  for (const auto& p : instructions_) {
    if (p->name() == name) return p.get();
  }
  return nullptr;
}

std::vector<Instruction*> Computation::PostOrder() const {
  // Iterative DFS so very deep graphs (long chains) cannot overflow the stack.
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  // One flat map for both marks: passes call this on every computation, and
  // node-based sets made it a large share of compile time.
  enum Mark : uint8_t { kOnStack, kDone };
  absl::flat_hash_map<const Instruction*, Mark> mark;
  mark.reserve(instructions_.size());
  std::vector<std::pair<Instruction*, size_t>> stack;
  auto visit = [&](Instruction* start) {
    if (!mark.try_emplace(start, kOnStack).second) return;  // done (never on the stack here)
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      size_t n_ops = inst->operands().size();
      size_t n_all = n_ops + inst->control_predecessors().size();
      if (next < n_all) {
        Instruction* dep = next < n_ops ? inst->operands()[next]
                                        : inst->control_predecessors()[next - n_ops];
        ++next;
        // Skip finished nodes and cycles (the verifier reports cycles).
        if (mark.try_emplace(dep, kOnStack).second) stack.push_back({dep, 0});
        continue;
      }
      mark[inst] = kDone;
      order.push_back(inst);
      stack.pop_back();
    }
  };
  for (const auto& p : instructions_) {
    if (p.get() != root_) visit(p.get());
  }
  if (root_) {
    // The root goes last even when something above already reached it.
    if (mark.contains(root_)) {
      order.erase(std::find(order.begin(), order.end(), root_));
      order.push_back(root_);
    } else {
      visit(root_);
    }
  }
  return order;
}

}  // namespace neuron::hlo
