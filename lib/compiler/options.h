// neuron-compile's command line: neuronx-cc's options plus a few of ours,
// parsed from NEURON_CC_FLAGS followed by argv (so the command line wins;
// for a repeated option the right-most one wins, as in neuronx-cc).
#ifndef NEURON_LIB_COMPILER_OPTIONS_H_
#define NEURON_LIB_COMPILER_OPTIONS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::compiler {

enum class AutoCast { kNone, kMatmult, kAll };
enum class AutoCastType { kBf16, kFp16, kTf32, kFp8E4M3 };
enum class ModelType { kGeneric, kTransformer, kUnetInference };
enum class ElidedFillMode { kRefuse, kZeros, kRandom };

// Python logging levels, as --verbose takes them.
enum LogLevel : int { kDebug = 10, kInfo = 20, kWarning = 30, kError = 40, kCritical = 50 };

struct CompileOptions {
  std::string input;                   // FILE or "-"
  std::string framework = "XLA";
  std::string target = "trn1";         // trn1, trn1n, inf2, trn2
  bool target_given = false;
  ModelType model_type = ModelType::kGeneric;
  AutoCast auto_cast = AutoCast::kNone;
  AutoCastType auto_cast_type = AutoCastType::kBf16;
  bool mixed_precision_accumulation = true;
  int optlevel = 2;
  int lnc = 1;                         // default: 2 on trn2, 1 elsewhere
  bool lnc_given = false;
  std::string distribution_strategy;   // "" or "llm-training"
  bool fast_context_switch = false;
  bool fast_loading = false;
  bool saturate_infinity = false;
  std::string output = "file.neff";
  std::string logfile = "log-neuron-cc.txt";
  int verbose = kWarning;
  // Ours.
  ElidedFillMode fill_elided = ElidedFillMode::kRefuse;
  bool verify_each_pass = false;
  std::string cache_dir;               // "" = no cache (NEURON_COMPILE_CACHE_URL fills it)
  bool no_cache = false;
  bool retry_failed_compilation = false;
  std::string name;                    // model name for the NEFF header ("" = module name)
  bool quiet = false;                  // --quiet: no progress line
  // Accepted for compatibility, ignored (each logged at info).
  std::vector<std::string> ignored;
};

enum class Command { kHelp, kVersion, kCompile, kListOperators, kCompileHelp, kCompletion };

struct ParsedCommand {
  Command command = Command::kHelp;
  CompileOptions options;
  std::string text;  // kHelp, kCompileHelp: the help; kCompletion: the script
};

// Splits like a POSIX shell: whitespace separates words, single and double
// quotes group, backslash escapes. Errors on an unterminated quote.
absl::StatusOr<std::vector<std::string>> SplitShellWords(std::string_view text);

// Parses `args` (argv without the program name) with the option tables
// of lib/support/options.h. `env_flags` is the value of NEURON_CC_FLAGS
// (nullopt when unset), parsed before the compile command's own options;
// `cache_url` that of NEURON_COMPILE_CACHE_URL. Errors are usage errors
// (exit 2) carrying NCC-E0101 or NCC-E0102; one caused by NEURON_CC_FLAGS
// says so.
absl::StatusOr<ParsedCommand> ParseCommandLine(const std::vector<std::string>& args,
                                               std::optional<std::string> env_flags = std::nullopt,
                                               std::optional<std::string> cache_url = std::nullopt);

// The options that shape the program, as canonical "--name=value" strings
// (recorded in neff.json and part of the cache key).
std::vector<std::string> NormalizedOptions(const CompileOptions& options);

// The values --target and --optlevel take, for the tools that take them
// too (neuron-exec, neuron-load).
std::vector<std::string> TargetNames();
std::vector<std::string> OptLevelNames();

std::string_view AutoCastName(AutoCast a);
std::string_view AutoCastTypeName(AutoCastType t);
std::string_view ModelTypeName(ModelType m);
std::string_view LogLevelName(int level);

// --help texts.
std::string GeneralHelp();
std::string CompileHelp();

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_OPTIONS_H_
