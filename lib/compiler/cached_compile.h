// A compile through the compile cache (--cache-dir,
// NEURON_COMPILE_CACHE_URL), as neuron-compile does it and as neuron-exec
// and neuron-load do it for an HLO input: a cached NEFF is reused, a cached
// failure is reported again (unless --retry-failed-compilation), and a
// fresh outcome is stored for the next compile of the same bytes.
#ifndef NEURON_LIB_COMPILER_CACHED_COMPILE_H_
#define NEURON_LIB_COMPILER_CACHED_COMPILE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/compiler/compile_log.h"
#include "lib/compiler/options.h"

namespace neuron::compiler {

struct CachedCompile {
  std::string neff;
  bool from_cache = false;
  int64_t scratch_peak = 0;  // bytes, for the log (a fresh compile only)
};

// Rewrites the message of a failed compile before it is logged and cached
// (neuron-compile adds where it saved a reproducer).
using FailureAnnotator = std::function<std::string(const absl::Status&)>;

// Compiles `input` (HLO text or proto; `display` names it in messages).
// Every step is logged in `log`, a failure included (recorded, not
// printed: the caller prints it). Errors carry NCC codes.
absl::StatusOr<CachedCompile> CompileThroughCache(std::string_view input, std::string_view display,
                                                  const CompileOptions& options, CompileLog& log,
                                                  const FailureAnnotator& annotate = nullptr);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_CACHED_COMPILE_H_
