#include "lib/hlo/instruction.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/hlo/computation.h"

namespace neuron::hlo {

namespace {
constexpr std::string_view kDirectionNames[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
}  // namespace

std::string_view ComparisonDirectionName(ComparisonDirection d) {
  return kDirectionNames[static_cast<int>(d)];
}

std::optional<ComparisonDirection> ComparisonDirectionFromName(std::string_view name) {
  for (int i = 0; i < 6; ++i) {
    if (kDirectionNames[i] == name) return static_cast<ComparisonDirection>(i);
  }
  return std::nullopt;
}

Instruction::Instruction(Opcode opcode, std::string name, Shape shape)
    : opcode_(opcode),
      opcode_text_(OpcodeName(opcode)),
      name_(std::move(name)),
      shape_(std::move(shape)) {}

Instruction::~Instruction() = default;

void Instruction::AddOperand(Instruction* operand) {
  operands_.push_back(operand);
  if (std::find(operand->users_.begin(), operand->users_.end(), this) ==
      operand->users_.end()) {
    operand->users_.push_back(this);
  }
}

void Instruction::RemoveUser(Instruction* user) {
  // Only drop the user once it no longer uses us through any operand slot.
  if (std::find(user->operands_.begin(), user->operands_.end(), this) !=
      user->operands_.end()) {
    return;
  }
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void Instruction::ReplaceOperand(size_t i, Instruction* operand) {
  Instruction* old = operands_[i];
  operands_[i] = operand;
  old->RemoveUser(this);
  if (std::find(operand->users_.begin(), operand->users_.end(), this) ==
      operand->users_.end()) {
    operand->users_.push_back(this);
  }
}

void Instruction::ReplaceAllUsesWith(Instruction* other) {
  if (other == this) return;
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users) {
    for (size_t i = 0; i < user->operands_.size(); ++i) {
      if (user->operands_[i] == this) user->ReplaceOperand(i, other);
    }
  }
  if (parent_ && parent_->root() == this) parent_->set_root(other);
}

void Instruction::ClearOperands() {
  std::vector<Instruction*> old = std::move(operands_);
  operands_.clear();
  for (Instruction* op : old) op->RemoveUser(this);
}

void Instruction::AddControlPredecessor(Instruction* pred) {
  control_predecessors_.push_back(pred);
}

std::string Instruction::Describe() const {
  if (line_ > 0) return absl::StrCat("'%", name_, "' (line ", line_, ")");
  return absl::StrCat("'%", name_, "'");
}

}  // namespace neuron::hlo
