// Loading a module from bytes or a file: HLO text or binary proto
// (HloModuleProto, or the HloProto / HloModuleProtoWithConfig wrappers),
// told apart by content.
#ifndef NEURON_LIB_HLO_LOAD_H_
#define NEURON_LIB_HLO_LOAD_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/hlo/module.h"

namespace neuron::hlo {

// True when the bytes look like HLO text: after whitespace and comments
// they start with "HloModule".
bool LooksLikeText(std::string_view bytes);

// Parses text or binary; display_name prefixes error messages.
absl::StatusOr<std::unique_ptr<Module>> LoadModule(std::string_view bytes,
                                                   std::string_view display_name);

// Reads `path` ("-" reads stdin) and loads it.
absl::StatusOr<std::unique_ptr<Module>> LoadModuleFromFile(const std::string& path);

// Constants whose values the printer elided ("{...}").
std::vector<Instruction*> ElidedConstants(const Module& module);

// Error naming the first elided constant, or OK when there are none. The
// compiler calls this unless the user asked for a fill.
absl::Status CheckNoElidedConstants(const Module& module);

enum class ElidedFill { kZeros, kRandom };
// Gives every elided constant values: zeros, or pseudo-random values from
// `seed` (uniform in [-1, 1) for floats, [0, 10) for integers).
void FillElidedConstants(Module& module, ElidedFill fill, uint64_t seed = 0);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_LOAD_H_
