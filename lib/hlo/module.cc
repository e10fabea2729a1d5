#include "lib/hlo/module.h"

#include <unordered_set>

namespace neuron::hlo {

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  Computation* raw = computation.get();
  raw->parent_ = this;
  computations_.push_back(std::move(computation));
  return raw;
}

void Module::RetainComputations(const std::vector<Computation*>& keep) {
  std::unordered_set<const Computation*> kept(keep.begin(), keep.end());
  for (auto& c : computations_) {
    if (kept.count(c.get())) (void)c.release();
  }
  std::vector<std::unique_ptr<Computation>> old = std::move(computations_);
  computations_.clear();
  for (Computation* c : keep) computations_.emplace_back(c);
  if (entry_ && !kept.count(entry_)) entry_ = nullptr;
  old.clear();
}

std::vector<Computation*> Module::computations() const {
  std::vector<Computation*> out;
  for (const auto& c : computations_) out.push_back(c.get());
  return out;
}

Computation* Module::Find(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<Computation*> Module::PostOrder() const {
  std::vector<Computation*> order;
  std::unordered_set<const Computation*> done, on_stack;
  auto visit = [&](Computation* start) {
    if (done.count(start)) return;
    // (computation, flattened list of callees, next index)
    struct Frame {
      Computation* c;
      std::vector<Computation*> callees;
      size_t next = 0;
    };
    auto callees_of = [](Computation* c) {
      std::vector<Computation*> out;
      for (Instruction* inst : c->instructions()) {
        for (Computation* callee : inst->called_computations()) out.push_back(callee);
      }
      return out;
    };
    std::vector<Frame> stack;
    stack.push_back({start, callees_of(start)});
    on_stack.insert(start);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.callees.size()) {
        Computation* callee = f.callees[f.next++];
        if (callee && !done.count(callee) && !on_stack.count(callee)) {
          on_stack.insert(callee);
          stack.push_back({callee, callees_of(callee)});
        }
        continue;
      }
      done.insert(f.c);
      on_stack.erase(f.c);
      order.push_back(f.c);
      stack.pop_back();
    }
  };
  for (const auto& c : computations_) {
    if (c.get() != entry_) visit(c.get());
  }
  if (entry_ && !done.count(entry_)) visit(entry_);
  return order;
}

size_t Module::instruction_count() const {
  size_t n = 0;
  for (const auto& c : computations_) n += c->instruction_count();
  return n;
}

bool Module::NeedsMultipleDevices() const {
  if (config_.replica_count > 1 || config_.num_partitions > 1) return true;
  for (const auto& c : computations_) {
    for (Instruction* inst : c->instructions()) {
      if (IsCollective(inst->opcode())) return true;
    }
  }
  return false;
}

}  // namespace neuron::hlo
