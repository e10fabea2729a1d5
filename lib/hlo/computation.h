// A computation: a function of parameters made of instructions, with one
// root. Owns its instructions; keeps them in a valid (operands-first) order
// as read, and can produce a post order from the root for passes.
#ifndef NEURON_LIB_HLO_COMPUTATION_H_
#define NEURON_LIB_HLO_COMPUTATION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/hlo/instruction.h"

namespace neuron::hlo {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  int64_t id() const { return id_; }
  void set_id(int64_t id) { id_ = id; }
  int line() const { return line_; }
  void set_line(int line) { line_ = line; }
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }
  bool is_fusion_computation() const { return is_fusion_; }
  void set_is_fusion_computation(bool v) { is_fusion_ = v; }
  Module* parent() const { return parent_; }

  // Takes ownership; parameters are also indexed by number.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // Removes an instruction no one uses (and that is not the root).
  absl::Status RemoveInstruction(Instruction* instruction);
  // Keeps exactly `keep` (instructions of this computation, closed under
  // operands and control predecessors), in that order, and destroys the
  // rest in one sweep. Users lists and the parameter index are rebuilt as
  // if `keep` had been added afresh in order, so the result matches a copy
  // of the computation made that way.
  void RetainInstructions(const std::vector<Instruction*>& keep);

  // Instructions in the order they were added.
  std::vector<Instruction*> instructions() const;
  size_t instruction_count() const { return instructions_.size(); }
  // Parameters by parameter number (entries may be null when numbers skip).
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  Instruction* parameter(size_t i) const {
    return i < parameters_.size() ? parameters_[i] : nullptr;
  }
  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }
  Instruction* Find(std::string_view name) const;

  // Every instruction after its operands and control predecessors, the root
  // last; instructions not reachable from the root come before it too.
  std::vector<Instruction*> PostOrder() const;

 private:
  friend class Module;
  std::string name_;
  int64_t id_ = -1;
  int line_ = 0;
  std::string execution_thread_;
  bool is_fusion_ = false;
  Module* parent_ = nullptr;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
};

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_COMPUTATION_H_
