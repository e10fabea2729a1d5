#include "lib/nrt_client/model_input.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/compiler/cached_compile.h"
#include "lib/compiler/input_kind.h"
#include "lib/compiler/options.h"
#include "lib/config/config.h"
#include "lib/support/parse.h"
#include "lib/neff/header.h"

namespace neuron::nrt_client {
namespace {

// Reads the head of a file (enough to spot a NEFF) or, with `whole`, all of it.
absl::Status ReadFile(const std::string& path, bool whole, std::string* out) {
  struct stat st{};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrFormat("cannot read '%s': it is a directory", path));
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
  }
  out->clear();
  char buf[1 << 16];
  size_t n;
  const size_t want = whole ? sizeof buf : neff::kSignatureSize;
  while ((n = std::fread(buf, 1, want, f)) > 0) {
    out->append(buf, n);
    if (!whole) break;
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) return absl::InternalError(absl::StrFormat("%s: read failed: %s", path, std::strerror(err)));
  return absl::OkStatus();
}

// neuron-compile's options for this command line: NEURON_CC_FLAGS, then
// --target and -O; without a target, the simulated device's own.
absl::StatusOr<compiler::CompileOptions> CompileOptionsFor(const HloCompileFlags& flags,
                                                           const std::string& display,
                                                           const RuntimeSession& session) {
  std::vector<std::string> args = {"compile", "-"};
  if (flags.target) args.insert(args.end(), {"--target", *flags.target});
  if (flags.optlevel) args.insert(args.end(), {"--optlevel", *flags.optlevel});
  const config::EnvLookup env = config::ProcessEnv();
  absl::StatusOr<compiler::ParsedCommand> parsed =
      compiler::ParseCommandLine(args, env("NEURON_CC_FLAGS"), env("NEURON_COMPILE_CACHE_URL"));
  if (!parsed.ok()) {
    // The command line's flags were checked already: this is the variable.
    return absl::InvalidArgumentError(
        absl::StrCat("NEURON_CC_FLAGS: ", std::string(parsed.status().message())));
  }
  if (parsed->command != compiler::Command::kCompile) {
    return absl::InvalidArgumentError("NEURON_CC_FLAGS: asks for help, not a compile");
  }
  compiler::CompileOptions o = parsed->options;
  o.input = display;
  const std::string& arch = session.arch();
  if (!o.target_given && !arch.empty()) o.target = arch;
  // The device's LNC size (NEURON_LOGICAL_NC_CONFIG, as the SDK documents
  // it), where the NEFF is for its generation and no LNC was asked for;
  // elsewhere neuron-compile's default.
  int device_lnc = 0;
  if (std::optional<std::string> lnc = env("NEURON_LOGICAL_NC_CONFIG")) {
    absl::StatusOr<uint64_t> n = ParseUnsigned(*lnc, 2);
    if (n.ok()) device_lnc = static_cast<int>(*n);
  }
  if (!o.lnc_given) {
    o.lnc = o.target == "trn2" ? 2 : 1;
    if (o.target == "trn2" && arch == "trn2" && (device_lnc == 1 || device_lnc == 2)) o.lnc = device_lnc;
  }
  return o;
}

}  // namespace

absl::Status CheckHloCompileFlags(const HloCompileFlags& flags) {
  auto check = [](const char* option, const std::optional<std::string>& value,
                  const std::vector<std::string>& accepted) {
    if (!value || std::find(accepted.begin(), accepted.end(), *value) != accepted.end()) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s '%s': expected %s (as neuron-compile takes it)", option, *value, absl::StrJoin(accepted, ", ")));
  };
  if (absl::Status s = check("--target", flags.target, compiler::TargetNames()); !s.ok()) return s;
  return check("--optlevel", flags.optlevel, compiler::OptLevelNames());
}

std::vector<cli::Option> HloCompileOptions(HloCompileFlags* flags) {
  auto set = [flags](std::optional<std::string> HloCompileFlags::*field) {
    return [flags, field](std::string_view value) -> absl::Status {
      HloCompileFlags one;
      one.*field = std::string(value);
      if (absl::Status s = CheckHloCompileFlags(one); !s.ok()) return s;
      flags->*field = std::string(value);
      return absl::OkStatus();
    };
  };
  // The completion words outlive the table (it holds a view of them).
  static const std::string kTargets = absl::StrJoin(compiler::TargetNames(), " ");
  return {
      {0, "target", cli::Arg::kRequired, "T",
       "HLO input: trn1, trn1n, inf2 or trn2 (default:\nthe simulated instance's)",
       set(&HloCompileFlags::target), kTargets},
      {'O', "optlevel", cli::Arg::kRequired, "N",
       "HLO input: optimization level 1, 2 or 3 (default 2)", set(&HloCompileFlags::optlevel),
       "1 2 3"},
  };
}

absl::StatusOr<ModelInput> OpenModelInput(const std::string& path, const HloCompileFlags& flags,
                                          const RuntimeSession& session) {
  ModelInput input;
  input.display = path == "-" ? "<stdin>" : path;
  std::string bytes;
  if (path == "-") {
    bytes.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) return absl::InternalError("<stdin>: read failed");
  } else {
    // A regular NEFF file is mapped, not read; a pipe (<(neuron-compile
    // ...)) can be read once only, so it is read whole.
    struct stat st{};
    const bool regular = stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    if (regular) {
      if (absl::Status s = ReadFile(path, /*whole=*/false, &bytes); !s.ok()) return s;
      if (neff::LooksLikeNeff(bytes)) {
        absl::StatusOr<std::shared_ptr<neff::MappedFile>> mapped = neff::MappedFile::Open(path);
        if (!mapped.ok()) return absl::InvalidArgumentError(std::string(mapped.status().message()));
        input.kind = "neff";
        input.mapped = std::move(*mapped);
        input.path = path;
        return input;
      }
    }
    if (absl::Status s = ReadFile(path, /*whole=*/true, &bytes); !s.ok()) return s;
  }
  const compiler::ClassifiedInput what = compiler::ClassifyInput(bytes);
  switch (what.kind) {
    case compiler::InputKind::kNeff:
      input.kind = "neff";
      input.neff_bytes = std::move(bytes);
      return input;
    case compiler::InputKind::kOther:
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s, not a NEFF or HLO module", input.display, what.description));
    case compiler::InputKind::kHloText:
    case compiler::InputKind::kHloProto:
      break;
  }
  input.kind = what.kind == compiler::InputKind::kHloText ? "hlo-text" : "hlo-proto";
  absl::StatusOr<compiler::CompileOptions> options = CompileOptionsFor(flags, input.display, session);
  if (!options.ok()) return options.status();
  // A silent log: stdout carries the tool's results, and a failure is the
  // one error line the tool prints (a cached one would otherwise be
  // announced by a warning first).
  compiler::CompileLog log;
  absl::StatusOr<compiler::CachedCompile> neff =
      compiler::CompileThroughCache(bytes, input.display, *options, log);
  if (!neff.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot compile %s: %s", input.display, std::string(neff.status().message())));
  }
  input.neff_bytes = std::move(neff->neff);
  return input;
}

}  // namespace neuron::nrt_client
