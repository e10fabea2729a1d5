#include "lib/compiler/options.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/support/options.h"
#include "lib/support/parse.h"

namespace neuron::compiler {
namespace {

absl::Status OptionError(std::string_view what) { return CompileError(kErrBadOption, what); }

template <typename T>
struct Choice {
  const char* name;
  T value;
};

constexpr Choice<ModelType> kModelTypes[] = {{"generic", ModelType::kGeneric},
                                             {"transformer", ModelType::kTransformer},
                                             {"unet-inference", ModelType::kUnetInference}};
constexpr Choice<AutoCast> kAutoCasts[] = {
    {"none", AutoCast::kNone}, {"matmult", AutoCast::kMatmult}, {"all", AutoCast::kAll}};
constexpr Choice<AutoCastType> kAutoCastTypes[] = {{"bf16", AutoCastType::kBf16},
                                                   {"fp16", AutoCastType::kFp16},
                                                   {"tf32", AutoCastType::kTf32},
                                                   {"fp8_e4m3", AutoCastType::kFp8E4M3}};
constexpr Choice<int> kOptLevels[] = {{"1", 1}, {"2", 2}, {"3", 3}};
constexpr Choice<int> kLncs[] = {{"1", 1}, {"2", 2}};
constexpr Choice<int> kTargetsDummy[] = {{"trn1", 0}, {"trn1n", 0}, {"inf2", 0}, {"trn2", 0}};
constexpr Choice<int> kLevels[] = {{"debug", kDebug},     {"info", kInfo},
                                   {"warning", kWarning}, {"warn", kWarning},
                                   {"error", kError},     {"critical", kCritical}};
constexpr Choice<ElidedFillMode> kFills[] = {{"zeros", ElidedFillMode::kZeros},
                                             {"random", ElidedFillMode::kRandom}};
constexpr Choice<int> kStrategies[] = {{"llm-training", 0}, {"NEMO", 0}};

using cli::Arg;

absl::Status Invalid(std::string_view why) { return absl::InvalidArgumentError(std::string(why)); }

// A handler that picks one of `choices` into *out.
template <typename T, size_t N>
cli::Handler Pick(const Choice<T> (&choices)[N], T* out) {
  return [&choices, out](std::string_view value) -> absl::Status {
    std::vector<std::string> names;
    for (const Choice<T>& c : choices) {
      if (value == c.name) {
        *out = c.value;
        return absl::OkStatus();
      }
      names.push_back(c.name);
    }
    return Invalid(absl::StrCat("invalid value (choose from ", absl::StrJoin(names, ", "), ")"));
  };
}

cli::Handler Set(bool* out, bool value = true) {
  return [out, value](std::string_view) {
    *out = value;
    return absl::OkStatus();
  };
}

cli::Handler Store(std::string* out) {
  return [out](std::string_view v) {
    *out = std::string(v);
    return absl::OkStatus();
  };
}

// The compile subcommand's options: neuronx-cc's, then ours. A dummy
// receives what only validates (--target's choice check, --framework).
cli::Command CompileCommand(CompileOptions* o) {
  static int dummy;
  return {
      .tool = "neuron-compile",
      .name = "compile",
      .usage = "FILE [options]",
      .description =
          "compile an HLO module (text or hlo.pb; - = stdin)\n\n"
          "FILE is HLO text or a binary HloModuleProto/HloProto (hlo.pb); - reads stdin.",
      .options = {
          cli::Heading("options (neuronx-cc's):"),
          {0, "framework", Arg::kRequired, "XLA", "the input framework (only XLA)",
           [o](std::string_view v) -> absl::Status {
             if (v != "XLA") return Invalid("only XLA is supported");
             o->framework = "XLA";
             return absl::OkStatus();
           },
           "XLA"},
          {0, "target", Arg::kRequired, "{trn1,trn1n,inf2,trn2}",
           "instance family to compile for (default trn1)",
           [o](std::string_view v) -> absl::Status {
             if (absl::Status s = Pick(kTargetsDummy, &dummy)(v); !s.ok()) return s;
             o->target = std::string(v);
             o->target_given = true;
             return absl::OkStatus();
           },
           "trn1 trn1n inf2 trn2"},
          {0, "model-type", Arg::kRequired, "{generic,transformer,unet-inference}",
           "model-family optimizations (default generic)", Pick(kModelTypes, &o->model_type),
           "generic transformer unet-inference"},
          {0, "auto-cast", Arg::kRequired, "{none,matmult,all}",
           "cast FP32 operations to --auto-cast-type (default none)", Pick(kAutoCasts, &o->auto_cast),
           "none matmult all"},
          {0, "auto-cast-type", Arg::kRequired, "{bf16,fp16,tf32,fp8_e4m3}",
           "type auto-cast casts to (default bf16)", Pick(kAutoCastTypes, &o->auto_cast_type),
           "bf16 fp16 tf32 fp8_e4m3"},
          {0, "enable-mixed-precision-accumulation", Arg::kNone, "",
           "accumulate cast operations in FP32 (default)", Set(&o->mixed_precision_accumulation)},
          {0, "disable-mixed-precision-accumulation", Arg::kNone, "", "accumulate in the cast type",
           Set(&o->mixed_precision_accumulation, false)},
          {'O', "optlevel", Arg::kRequired, "{1,2,3}", "optimization level (default 2)",
           Pick(kOptLevels, &o->optlevel), "1 2 3"},
          {0, "logical-nc-config", Arg::kRequired, "{1,2}",
           "physical cores per logical core, trn2 only (default 2\non trn2, 1 elsewhere)",
           [o](std::string_view v) {
             o->lnc_given = true;
             return Pick(kLncs, &o->lnc)(v);
           },
           "1 2", {"-lnc", "--lnc"}},
          {0, "distribution-strategy", Arg::kRequired, "llm-training",
           "LLM training optimizations (recorded in the NEFF)",
           [o](std::string_view v) {
             absl::Status s = Pick(kStrategies, &dummy)(v);
             if (s.ok()) o->distribution_strategy = "llm-training";  // NEMO is its old name
             return s;
           },
           "llm-training"},
          {0, "enable-fast-context-switch", Arg::kNone, "",
           "favor fast model switching (recorded in the NEFF)", Set(&o->fast_context_switch)},
          {0, "enable-fast-loading-neuron-binaries", Arg::kNone, "",
           "uncompressed NEFF with page-aligned constants", Set(&o->fast_loading)},
          {0, "enable-saturate-infinity", Arg::kNone, "",
           "converts to narrower floats saturate instead of inf", Set(&o->saturate_infinity)},
          {'o', "output", Arg::kRequired, "PATH", "NEFF to write (default file.neff; - = stdout)",
           [o](std::string_view v) -> absl::Status {
             if (v.empty()) return Invalid("the path is empty");
             o->output = std::string(v);
             return absl::OkStatus();
           },
           "file"},
          {0, "logfile", Arg::kRequired, "PATH", "full log (default log-neuron-cc.txt; '' disables)",
           Store(&o->logfile), "file"},
          {0, "verbose", Arg::kRequired, "LEVEL",
           "debug, info, warning (default), error, critical, or\n"
           "a number (Python logging level, e.g. 35)",
           [o](std::string_view v) -> absl::Status {
             if (!v.empty() && v[0] >= '0' && v[0] <= '9') {
               absl::StatusOr<uint64_t> n = ParseUnsigned(v, 100);
               if (!n.ok()) return Invalid("invalid level (0-100)");
               o->verbose = static_cast<int>(*n);
               return absl::OkStatus();
             }
             return Pick(kLevels, &o->verbose)(v);
           },
           "debug info warning error critical"},
          {0, "execute-repetition", Arg::kRequired, "N", "accepted for compatibility and ignored",
           [o](std::string_view v) -> absl::Status {
             if (!ParseUnsigned(v).ok()) return Invalid("invalid count");
             o->ignored.push_back("--execute-repetition=" + std::string(v));
             return absl::OkStatus();
           }},
          {0, "enable-internal-neff-wrapper", Arg::kNone, "", "accepted for compatibility and ignored",
           [o](std::string_view) {
             o->ignored.push_back("--enable-internal-neff-wrapper");
             return absl::OkStatus();
           }},
          cli::Heading("options (neuron-compile's):"),
          {0, "cache-dir", Arg::kRequired, "DIR", "compile cache directory (NEURON_COMPILE_CACHE_URL)",
           Store(&o->cache_dir), "dir", {"--cache_dir"}},
          {0, "no-cache", Arg::kNone, "", "do not read or write the compile cache", Set(&o->no_cache),
           {}, {"--no_cache"}},
          {0, "retry-failed-compilation", Arg::kNone, "",
           "compile again when the cache holds a failure", Set(&o->retry_failed_compilation), {},
           {"--retry_failed_compilation"}},
          {0, "fill-elided-constants", Arg::kRequired, "{zeros,random}",
           "give constants printed as {...} values", Pick(kFills, &o->fill_elided), "zeros random"},
          {0, "verify-each-pass", Arg::kNone, "", "verify the module after every pass",
           Set(&o->verify_each_pass)},
          {0, "name", Arg::kRequired, "NAME", "model name in the NEFF header (default: module name)",
           Store(&o->name)},
          {'q', "quiet", Arg::kNone, "", "no progress line on stderr", Set(&o->quiet)},
      },
      .notes =
          "NEURON_CC_FLAGS holds options applied before the command line's (the right-most\n"
          "wins). Exit status: 0 success, 1 compile error, 2 usage error.",
      .operand_complete = "file",
  };
}

cli::Command ListOperatorsCommand() {
  return {
      .tool = "neuron-compile",
      .name = "list-operators",
      .usage = "[--framework XLA]",
      .description = "print the supported operators, one per line",
      .options = {{0, "framework", Arg::kRequired, "XLA", "the framework (only XLA)",
                   [](std::string_view v) {
                     return v == "XLA" ? absl::OkStatus() : Invalid("only XLA is supported");
                   },
                   "XLA"}},
      .max_operands = 0,
  };
}

cli::Command RootCommand(CompileOptions* o) {
  return {
      .tool = "neuron-compile",
      .usage = "<command> [options]",
      .description = "Compiles XLA HLO modules into NEFF executables for the Neuron runtime.",
      .notes =
          "'neuron-compile compile --help' lists the compile options.\n"
          "environment: NEURON_CC_FLAGS (extra compile options, the command line wins),\n"
          "NEURON_COMPILE_CACHE_URL (compile cache directory). Error codes: docs/error-codes.md.",
      .min_operands = 1,
      .max_operands = 0,
      .missing_operand = "give a command: compile, list-operators",
      .version_short = 'V',
      .subcommands = {CompileCommand(o), ListOperatorsCommand()},
  };
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size() &&
                 (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$')) {
        cur += text[++i];
      } else {
        cur += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
    } else {
      cur += c;
    }
  }
  if (quote) return OptionError(absl::StrFormat("NEURON_CC_FLAGS: unterminated %c quote", quote));
  if (in_word) words.push_back(std::move(cur));
  return words;
}

absl::StatusOr<ParsedCommand> ParseCommandLine(const std::vector<std::string>& args,
                                               std::optional<std::string> env_flags,
                                               std::optional<std::string> cache_url) {
  ParsedCommand parsed;
  CompileOptions& o = parsed.options;
  const cli::Command root = RootCommand(&o);
  if (!args.empty() && args[0] == "help") {
    parsed.text = cli::HelpText(root);
    return parsed;
  }
  const bool compiling = !args.empty() && args[0] == "compile";
  std::vector<std::string> positional;
  if (compiling && cache_url && !cache_url->empty()) {
    // Local paths only; an S3 URL would need credentials we do not handle.
    if (cache_url->find("://") == std::string::npos || cache_url->rfind("file://", 0) == 0) {
      o.cache_dir = cache_url->rfind("file://", 0) == 0 ? cache_url->substr(7) : *cache_url;
    } else {
      o.ignored.push_back(absl::StrCat("NEURON_COMPILE_CACHE_URL=", *cache_url, " (only local paths)"));
    }
  }
  // NEURON_CC_FLAGS first, so the command line's options win.
  if (compiling && env_flags) {
    absl::StatusOr<std::vector<std::string>> env_words = SplitShellWords(*env_flags);
    if (!env_words.ok()) return env_words.status();
    cli::ParsedArgs from_env = cli::ParseArgs(root.subcommands[0], *env_words);
    if (from_env.action == cli::ParsedArgs::kError) {
      return OptionError(absl::StrCat("in NEURON_CC_FLAGS: ", from_env.error));
    }
    positional = std::move(from_env.operands);
  }
  cli::ParsedArgs p = cli::ParseArgs(root, args);
  switch (p.action) {
    case cli::ParsedArgs::kError:
      return OptionError(p.error);
    case cli::ParsedArgs::kHelp:
      parsed.command = p.command->name == "compile" ? Command::kCompileHelp : Command::kHelp;
      parsed.text = cli::HelpText(*p.command);
      return parsed;
    case cli::ParsedArgs::kVersion:
      parsed.command = Command::kVersion;
      return parsed;
    case cli::ParsedArgs::kCompletion:
      parsed.command = Command::kCompletion;
      parsed.text = cli::BashCompletion(root);
      return parsed;
    case cli::ParsedArgs::kRun:
      break;
  }
  if (p.command->name == "list-operators") {
    parsed.command = Command::kListOperators;
    return parsed;
  }
  parsed.command = Command::kCompile;
  positional.insert(positional.end(), p.operands.begin(), p.operands.end());
  if (positional.empty()) return OptionError("compile: missing the model FILE (or - for stdin)");
  if (positional.size() > 1) {
    return OptionError(absl::StrFormat("compile: one model file expected, got '%s' and '%s'", positional[0],
                                       positional[1]));
  }
  o.input = positional[0];
  if (o.lnc_given && o.target != "trn2") {
    return CompileError(kErrOptionConflict,
                        absl::StrFormat("--logical-nc-config/-lnc %d is only supported with --target trn2, "
                                        "not %s",
                                        o.lnc, o.target));
  }
  if (!o.lnc_given) o.lnc = o.target == "trn2" ? 2 : 1;
  return parsed;
}

std::vector<std::string> TargetNames() {
  std::vector<std::string> out;
  for (const auto& c : kTargetsDummy) out.push_back(c.name);
  return out;
}

std::vector<std::string> OptLevelNames() {
  std::vector<std::string> out;
  for (const auto& c : kOptLevels) out.push_back(c.name);
  return out;
}

std::string_view AutoCastName(AutoCast a) {
  for (const auto& c : kAutoCasts) {
    if (c.value == a) return c.name;
  }
  return "?";
}
std::string_view AutoCastTypeName(AutoCastType t) {
  for (const auto& c : kAutoCastTypes) {
    if (c.value == t) return c.name;
  }
  return "?";
}
std::string_view ModelTypeName(ModelType m) {
  for (const auto& c : kModelTypes) {
    if (c.value == m) return c.name;
  }
  return "?";
}
std::string_view LogLevelName(int level) {
  if (level >= kCritical) return "critical";
  if (level >= kError) return "error";
  if (level >= kWarning) return "warning";
  if (level >= kInfo) return "info";
  return "debug";
}

std::vector<std::string> NormalizedOptions(const CompileOptions& o) {
  std::vector<std::string> out = {
      absl::StrCat("--framework=", o.framework),
      absl::StrCat("--target=", o.target),
      "--model-type=" + std::string(ModelTypeName(o.model_type)),
      "--auto-cast=" + std::string(AutoCastName(o.auto_cast)),
      "--auto-cast-type=" + std::string(AutoCastTypeName(o.auto_cast_type)),
      o.mixed_precision_accumulation ? "--enable-mixed-precision-accumulation"
                                     : "--disable-mixed-precision-accumulation",
      absl::StrCat("--optlevel=", o.optlevel),
      absl::StrCat("--logical-nc-config=", o.lnc),
  };
  if (!o.distribution_strategy.empty()) out.push_back("--distribution-strategy=" + o.distribution_strategy);
  if (o.fast_context_switch) out.push_back("--enable-fast-context-switch");
  if (o.fast_loading) out.push_back("--enable-fast-loading-neuron-binaries");
  if (o.saturate_infinity) out.push_back("--enable-saturate-infinity");
  if (o.fill_elided == ElidedFillMode::kZeros) out.push_back("--fill-elided-constants=zeros");
  if (o.fill_elided == ElidedFillMode::kRandom) out.push_back("--fill-elided-constants=random");
  if (!o.name.empty()) out.push_back("--name=" + o.name);
  return out;
}

std::string GeneralHelp() {
  CompileOptions unused;
  return cli::HelpText(RootCommand(&unused));
}

std::string CompileHelp() {
  CompileOptions unused;
  return cli::HelpText(CompileCommand(&unused));
}

}  // namespace neuron::compiler
