// Reads binary HLO protos into the IR: a bare HloModuleProto (as JAX
// writes), an HloProto wrapper (XLA's --xla_dump_hlo_as_proto) or an
// HloModuleProtoWithConfig (XLA:CPU AOT), told apart by content.
#ifndef NEURON_LIB_HLO_PROTO_READER_H_
#define NEURON_LIB_HLO_PROTO_READER_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/hlo/module.h"

namespace neuron::xla {
class HloModuleProto;
}

namespace neuron::hlo {

// True when the bytes parse as a binary HloModuleProto (bare, or in an
// HloProto / HloModuleProtoWithConfig wrapper) holding computations: the
// content test that tells a binary module from other binary data.
bool LooksLikeProto(std::string_view bytes);

absl::StatusOr<std::unique_ptr<Module>> ParseProto(std::string_view bytes,
                                                   std::string_view display_name);

// Converts an already parsed module proto (replica/partition counts come
// from the wrapper when there is one, so they are passed in).
absl::StatusOr<std::unique_ptr<Module>> ConvertProto(const xla::HloModuleProto& proto,
                                                     std::string_view display_name);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_PROTO_READER_H_
