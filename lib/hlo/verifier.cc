#include "lib/hlo/verifier.h"

#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_format.h"
#include "lib/hlo/shape_inference.h"

namespace neuron::hlo {
namespace {

class Verifier {
 public:
  explicit Verifier(const Module& module) : module_(module) {}

  absl::Status Run() {
    if (!module_.entry()) return ModuleError("has no entry computation");
    std::unordered_set<const Computation*> known;
    for (const Computation* c : module_.computations()) known.insert(c);
    if (!known.count(module_.entry())) return ModuleError("entry computation is not part of the module");
    for (const Computation* c : module_.computations()) {
      if (absl::Status s = VerifyComputation(*c, known); !s.ok()) return s;
    }
    if (absl::Status s = VerifyInputOutputAlias(module_); !s.ok()) return ModuleError(std::string(s.message()));
    return absl::OkStatus();
  }

 private:
  absl::Status ModuleError(std::string_view what) const {
    return absl::InvalidArgumentError(absl::StrFormat("%s: module %s", module_.name(), what));
  }
  absl::Status ComputationError(const Computation& c, std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: computation '%s': %s", module_.name(), c.name(), what));
  }
  absl::Status Error(const Computation& c, const Instruction& inst, std::string_view what) const {
    std::string where = inst.line() > 0 ? absl::StrFormat(" (line %d)", inst.line()) : "";
    return absl::InvalidArgumentError(absl::StrFormat("%s: computation '%s', instruction '%%%s'%s: %s",
                                                      module_.name(), c.name(), inst.name(), where, what));
  }

  absl::Status VerifyComputation(const Computation& c,
                                 const std::unordered_set<const Computation*>& known) {
    if (c.instruction_count() == 0) return ComputationError(c, "has no instructions");
    if (!c.root()) return ComputationError(c, "has no root instruction");
    if (c.root()->parent() != &c) return ComputationError(c, "its root belongs to another computation");
    // Parameters: numbers 0..n-1, each once.
    std::unordered_map<int64_t, const Instruction*> params;
    for (const Instruction* inst : c.instructions()) {
      if (inst->opcode() != Opcode::kParameter) continue;
      int64_t n = inst->attrs().parameter_number;
      if (!params.emplace(n, inst).second) {
        return Error(c, *inst, absl::StrFormat("parameter number %d is used twice", n));
      }
    }
    for (const auto& [n, inst] : params) {
      if (n < 0 || n >= static_cast<int64_t>(params.size())) {
        return Error(c, *inst, absl::StrFormat("parameter number %d leaves a gap (the computation has %d parameters)",
                                               n, params.size()));
      }
    }
    // Operands must come from this computation, and the graph must be acyclic.
    for (const Instruction* inst : c.instructions()) {
      for (const Instruction* op : inst->operands()) {
        if (!op || op->parent() != &c) {
          return Error(c, *inst, "has an operand from another computation");
        }
      }
      for (const Computation* callee : inst->called_computations()) {
        if (!callee || !known.count(callee)) return Error(c, *inst, "calls a computation outside the module");
        if (callee == &c) return Error(c, *inst, "calls its own computation");
      }
    }
    std::unordered_set<const Instruction*> seen;
    for (const Instruction* inst : c.PostOrder()) {
      for (const Instruction* op : inst->operands()) {
        if (!seen.count(op)) return Error(c, *inst, absl::StrFormat("is part of a cycle through '%%%s'", op->name()));
      }
      seen.insert(inst);
    }
    for (const Instruction* inst : c.instructions()) {
      if (absl::Status s = VerifyInstruction(c, *inst); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status VerifyInstruction(const Computation& c, const Instruction& inst) {
    const Shape& declared = inst.shape();
    if (declared.type == ElementType::kInvalid || declared.type == ElementType::kOpaque) {
      return Error(c, inst, absl::StrFormat("has an invalid shape %s", declared.ToString()));
    }
    if (!declared.HasUnknownDimension() && !declared.ArrayBytes()) {
      return Error(c, inst, absl::StrFormat("shape %s has too many elements (its bytes do not fit "
                                            "in 63 bits)", declared.ToString()));
    }
    if (declared.layout && declared.IsArray() &&
        !declared.layout->minor_to_major.empty() &&
        declared.layout->minor_to_major.size() != declared.dims.size()) {
      return Error(c, inst, absl::StrFormat("layout of %s does not list every dimension", declared.ToString()));
    }
    auto inferred = InferShape(inst);
    if (!inferred.ok()) return Error(c, inst, std::string(inferred.status().message()));
    if (*inferred && !(*inferred)->Compatible(declared)) {
      return Error(c, inst, absl::StrFormat("declared shape %s does not match the inferred shape %s",
                                            declared.ToString(false), (*inferred)->ToString(false)));
    }
    return absl::OkStatus();
  }

  const Module& module_;
};

}  // namespace

absl::Status Verify(const Module& module) { return Verifier(module).Run(); }

}  // namespace neuron::hlo
