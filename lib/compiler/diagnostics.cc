#include "lib/compiler/diagnostics.h"

#include <cstdlib>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/compiler/error_codes.h"
#include "lib/hlo/computation.h"

namespace neuron::compiler {
namespace {
constexpr char kCodePayload[] = "neuron.compiler.code";
}  // namespace

std::string DescribeLocation(const hlo::Instruction& inst) {
  std::string out = absl::StrCat("%", inst.name());
  if (inst.parent()) absl::StrAppend(&out, " in computation '", inst.parent()->name(), "'");
  const hlo::Metadata& md = inst.attrs().metadata;
  std::string where;
  if (!md.source_file.empty()) {
    where = md.source_file;
    if (md.source_line > 0) absl::StrAppend(&where, ":", md.source_line);
  } else if (inst.line() > 0) {
    where = absl::StrCat("line ", inst.line(), " of the module");
  }
  if (!md.op_name.empty()) {
    if (!where.empty()) where += ", ";
    absl::StrAppend(&where, "op_name \"", md.op_name, "\"");
  }
  if (!where.empty()) absl::StrAppend(&out, " (", where, ")");
  return out;
}

absl::Status CompileError(const char* code, std::string_view what, const hlo::Instruction* inst) {
  std::string message = absl::StrFormat("%s: %s", code, what);
  if (inst) absl::StrAppend(&message, " at ", DescribeLocation(*inst));
  if (const ErrorCode* e = FindErrorCode(code)) {
    std::string fix(e->fix);
    // The hint to check NEURON_CC_FLAGS only helps when the problem came
    // from it (the message then names it).
    constexpr char kFlagsHint[] = "; check NEURON_CC_FLAGS too.";
    if (what.find("NEURON_CC_FLAGS") == std::string_view::npos && absl::EndsWith(fix, kFlagsHint)) {
      fix.resize(fix.size() - (sizeof(kFlagsHint) - 1));
      fix += ".";
    }
    absl::StrAppend(&message, ": ", fix);
  }
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kCodePayload, absl::Cord(code));
  return status;
}

std::string ErrorCodeOf(const absl::Status& status) {
  auto code = status.GetPayload(kCodePayload);
  return code ? std::string(*code) : std::string();
}

absl::Status AsInternalError(const absl::Status& status, const hlo::Instruction* inst) {
  if (status.ok() || !ErrorCodeOf(status).empty()) return status;
  return CompileError(kErrInternal, absl::StrCat("internal error: ", status.message()), inst);
}

}  // namespace neuron::compiler
