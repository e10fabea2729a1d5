// The model file neuron-exec and neuron-load are given, told apart by
// content: a NEFF is loaded as it is; HLO (text or a binary
// HloModuleProto) is first compiled in memory with neuron-compile's options
// and compile cache, as XLA's run_hlo_module runs a module directly; any
// other file is refused with what it is ("a NumPy array", "an empty
// file"). "-" reads standard input, whatever it holds.
#ifndef NEURON_LIB_NRT_CLIENT_MODEL_INPUT_H_
#define NEURON_LIB_NRT_CLIENT_MODEL_INPUT_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/neff/mapped_file.h"
#include "lib/nrt_client/runtime_session.h"
#include "lib/support/options.h"

namespace neuron::nrt_client {

// --target and -O, spelled as neuron-compile spells them; used only when
// the input is HLO. Unset: NEURON_CC_FLAGS, else the instance's family as
// the runtime reports it (nrt_get_instance_info; NEURON_LOGICAL_NC_CONFIG
// for the LNC size) and -O2.
struct HloCompileFlags {
  std::optional<std::string> target;
  std::optional<std::string> optlevel;  // "1", "2" or "3"
};

// Checks the flags as neuron-compile would (a usage error names the
// option and the accepted values).
absl::Status CheckHloCompileFlags(const HloCompileFlags& flags);

// The --target and -O/--optlevel entries of neuron-exec's and neuron-load's
// option tables (one definition, so both tools spell and check them alike).
std::vector<cli::Option> HloCompileOptions(HloCompileFlags* flags);

struct ModelInput {
  std::string display;  // the file, or "<stdin>"
  std::string kind;     // "neff", "hlo-text" or "hlo-proto"
  // The NEFF: a file mapped (no copy, however large its weights), or the
  // bytes read from stdin or compiled from HLO.
  std::shared_ptr<neff::MappedFile> mapped;
  std::string path;  // the mapped file ("" otherwise), for the runtime's dumps
  std::string neff_bytes;
  std::string_view neff() const { return mapped != nullptr ? mapped->bytes() : neff_bytes; }
};

// Reads `path` ("-" = stdin) far enough to tell what it holds, compiling
// HLO for the session's instance. Errors are one line naming the file.
absl::StatusOr<ModelInput> OpenModelInput(const std::string& path, const HloCompileFlags& flags,
                                          const RuntimeSession& session);

}  // namespace neuron::nrt_client

#endif  // NEURON_LIB_NRT_CLIENT_MODEL_INPUT_H_
