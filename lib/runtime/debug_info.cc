#include "lib/runtime/debug_info.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/hlo/opcode.h"

namespace neuron::runtime {

DebugInfo DebugInfo::Build(const hlo::Module& module) {
  DebugInfo info;
  for (const hlo::Computation* comp : module.computations()) {
    for (const hlo::Instruction* instr : comp->instructions()) {
      if (info.entries_.count(instr->name())) continue;
      std::string details = absl::StrFormat("%s in computation '%s'",
                                            hlo::OpcodeName(instr->opcode()), comp->name());
      const hlo::Metadata& m = instr->attrs().metadata;
      if (!m.op_name.empty()) absl::StrAppend(&details, ", op_name \"", m.op_name, "\"");
      if (!m.source_file.empty()) {
        absl::StrAppend(&details, " at ", m.source_file);
        if (m.source_line > 0) absl::StrAppend(&details, ":", m.source_line);
      }
      info.entries_.emplace(instr->name(), std::move(details));
    }
  }
  return info;
}

std::string DebugInfo::Describe(std::string_view step) const {
  auto it = entries_.find(std::string(step));
  if (it == entries_.end()) return "";
  return absl::StrFormat("HLO instruction '%s' (%s)", it->first, it->second);
}

}  // namespace neuron::runtime
