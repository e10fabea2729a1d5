// neuron-dump show: a readable or JSON view of what the dump tools and the
// compiler leave behind, told apart by content:
//   - a core dump (a zstd frame: core_dump_format.h),
//   - an input-dump manifest (JSON with "format": "neuron-input-dump"),
//     or the input-dump directory holding it,
//   - a NEFF (header_size 1024 at offset 8): header (compiler version,
//     LNC, feature bits), members, and for neuron-tools NEFFs the tensors,
//     operators and compile options of neff.json. NEFFs of the real
//     compiler (gzip'd tar) show header and members.
#ifndef NEURON_TOOLS_NEURON_DUMP_SHOW_H_
#define NEURON_TOOLS_NEURON_DUMP_SHOW_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::dump {

// The JSON view of the file at `path` ("-" = stdin); errors name the path
// and say why it is none of the above.
absl::StatusOr<nlohmann::json> Describe(const std::string& path);

// The readable text of a Describe() result.
std::string FormatText(const nlohmann::json& view);

}  // namespace neuron::dump

#endif  // NEURON_TOOLS_NEURON_DUMP_SHOW_H_
