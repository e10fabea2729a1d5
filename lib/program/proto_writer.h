// Writes the IR as XLA's binary HloModuleProtoWithConfig (XLA's field
// numbers; the mirror of lib/hlo/proto_reader), so ParseProto reads it back
// and XLA tools can decode it. Instruction and computation ids are
// renumbered (unique across the module); names are kept.
#ifndef NEURON_LIB_PROGRAM_PROTO_WRITER_H_
#define NEURON_LIB_PROGRAM_PROTO_WRITER_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/hlo/module.h"

namespace neuron::xla {
class HloModuleProtoWithConfig;
}

namespace neuron::program {

// Frontend attribute on a constant whose values live in a package member:
// its value is the member name; its literal carries the shape only.
inline constexpr char kExternalConstantAttribute[] = "neuron_constant_member";

struct ProtoWriteOptions {
  // For a constant instruction: the member holding its values, or "" to
  // keep the literal inline.
  std::function<std::string(const hlo::Instruction&)> external_member;
};

absl::Status ModuleToProto(const hlo::Module& module, const ProtoWriteOptions& options,
                           xla::HloModuleProtoWithConfig* proto);

// Serialized bytes of ModuleToProto.
absl::StatusOr<std::string> WriteModuleProto(const hlo::Module& module,
                                             const ProtoWriteOptions& options = {});

}  // namespace neuron::program

#endif  // NEURON_LIB_PROGRAM_PROTO_WRITER_H_
