#include "tools/neuron-compile/driver.h"

#include <unistd.h>

#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/compiler/cached_compile.h"
#include "lib/compiler/compiler.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/compiler/supported_ops.h"
#include "lib/support/cli.h"
#include "lib/support/atomic_file.h"
#include "lib/support/progress.h"
#include "neuron/version.h"

namespace neuron::compiler {
namespace {

namespace fs = std::filesystem;
constexpr char kTool[] = "neuron-compile";

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

absl::StatusOr<std::string> ReadInput(const std::string& path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return CompileError(kErrInputUnreadable, absl::StrFormat("cannot read '%s': it is a directory", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return CompileError(kErrInputUnreadable,
                        absl::StrFormat("cannot read '%s': %s", path, std::strerror(errno)));
  }
  ss << in.rdbuf();
  return ss.str();
}

// Writes atomically (temporary file + rename) so a reader never sees half
// a NEFF; "-" writes to stdout.
absl::Status WriteOutput(const std::string& path, std::string_view bytes) {
  if (path == "-") {
    if (fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || fflush(stdout) != 0) {
      return CompileError(kErrOutputUnwritable, "cannot write the NEFF to standard output");
    }
    return absl::OkStatus();
  }
  if (absl::Status s = WriteFileAtomically(path, bytes); !s.ok()) {
    return CompileError(kErrOutputUnwritable, std::string(s.message()));
  }
  return absl::OkStatus();
}

void WriteLogfile(const std::string& path, const std::string& text) {
  if (path.empty()) return;
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
}

// Saves the input next to the log file for a bug report.
std::string SaveReproducer(const CompileOptions& o, std::string_view input) {
  fs::path dir = o.logfile.empty() || o.logfile == "/dev/null" ? fs::path(".") : fs::path(o.logfile).parent_path();
  if (dir.empty()) dir = ".";
  fs::path repro = dir / absl::StrFormat("neuron-compile-repro-%d.hlo", static_cast<int>(getpid()));
  std::ofstream out(repro, std::ios::binary | std::ios::trunc);
  out.write(input.data(), static_cast<std::streamsize>(input.size()));
  return out ? repro.string() : std::string();
}

int Compile(const CompileOptions& o) {
  CompileLog log(o.verbose, o.output == "-");
  log.Info(absl::StrFormat("neuron-compile %s: compiling %s for %s (-O%d, lnc %d)", NEURON_TOOLS_VERSION, o.input,
                           o.target, o.optlevel, o.lnc));
  // Errors of the compile itself are already in the log (and the cache).
  auto report = [&](const absl::Status& status) {
    WriteLogfile(o.logfile, log.text());
    PrintError(kTool, std::string(status.message()));
    return kExitFailure;
  };
  auto fail = [&](const absl::Status& status) {
    log.Record(kError, std::string(status.message()));
    return report(status);
  };

  // A log file that cannot be written is refused before any work, so its
  // loss is never silent.
  if (!o.logfile.empty()) {
    std::ofstream probe(o.logfile, std::ios::binary | std::ios::app);
    if (!probe) {
      const std::string why = fs::is_directory(o.logfile) ? "it is a directory" : std::strerror(errno);
      PrintError(kTool, std::string(CompileError(kErrOutputUnwritable,
                                                 absl::StrFormat("cannot write the log file '%s': %s",
                                                                 o.logfile, why))
                                        .message()));
      return kExitFailure;
    }
  }

  absl::StatusOr<std::string> input = ReadInput(o.input);
  if (!input.ok()) return fail(input.status());

  const std::string display = o.input == "-" ? "<stdin>" : o.input;
  // An internal error saves the input beside the log for a bug report.
  auto add_reproducer = [&](const absl::Status& status) {
    std::string message(status.message());
    if (ErrorCodeOf(status) == kErrInternal) {
      std::string repro = SaveReproducer(o, *input);
      if (!repro.empty()) absl::StrAppend(&message, " (reproducer saved to ", repro, ")");
    }
    return message;
  };
  absl::StatusOr<CachedCompile> result = CompileThroughCache(*input, display, o, log, add_reproducer);
  if (!result.ok()) return report(result.status());
  if (absl::Status s = WriteOutput(o.output, result->neff); !s.ok()) return fail(s);
  if (result->from_cache) {
    WriteLogfile(o.logfile, log.text());
    return kExitOk;
  }
  log.Info(absl::StrFormat("Compilation successfully completed: %s (%zu bytes; peak scratch memory %d bytes)",
                           o.output == "-" ? "<stdout>" : o.output, result->neff.size(), result->scratch_peak));
  WriteLogfile(o.logfile, log.text());
  return kExitOk;
}

}  // namespace

int RunNeuronCompile(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedCommand> parsed =
      ParseCommandLine(args, Env("NEURON_CC_FLAGS"), Env("NEURON_COMPILE_CACHE_URL"));
  if (!parsed.ok()) {
    // The convention's usage error: one line naming the problem, a hint.
    const bool sub = !args.empty() && (args[0] == "compile" || args[0] == "list-operators");
    PrintError(kTool, std::string(parsed.status().message()));
    std::cerr << "Try '" << kTool << (sub ? " " + args[0] : std::string()) << " --help'.\n";
    return kExitUsage;
  }
  switch (parsed->command) {
    case Command::kHelp:
    case Command::kCompileHelp:
    case Command::kCompletion:
      std::cout << parsed->text;
      return kExitOk;
    case Command::kVersion:
      PrintVersion(kTool);
      return kExitOk;
    case Command::kListOperators:
      for (const std::string& op : SupportedOperators()) std::cout << op << "\n";
      for (const std::string& t : LoweredCustomCallTargets()) std::cout << "custom-call:" << t << "\n";
      return kExitOk;
    case Command::kCompile:
      Progress::EnableForTool(kTool, parsed->options.quiet);
      return Compile(parsed->options);
  }
  return kExitFailure;
}

}  // namespace neuron::compiler
