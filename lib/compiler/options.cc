#include "lib/compiler/options.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/support/parse.h"

namespace neuron::compiler {
namespace {

absl::Status OptionError(std::string_view what) { return CompileError(kErrBadOption, what); }

template <typename T>
struct Choice {
  const char* name;
  T value;
};

template <typename T, size_t N>
absl::Status PickChoice(std::string_view option, std::string_view value, const Choice<T> (&choices)[N],
                        T* out) {
  std::vector<std::string> names;
  for (const Choice<T>& c : choices) {
    if (value == c.name) {
      *out = c.value;
      return absl::OkStatus();
    }
    names.push_back(c.name);
  }
  return OptionError(absl::StrFormat("option %s: invalid value '%s' (choose from %s)", option, value,
                                     absl::StrJoin(names, ", ")));
}

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

using Handler = std::function<absl::Status(CompileOptions&, std::string_view value)>;

struct OptionSpec {
  std::vector<const char*> names;  // spellings, long ones with "--"
  bool takes_value;
  Handler handle;
};

const std::vector<OptionSpec>& Specs() {
  static const auto* specs = new std::vector<OptionSpec>{
      {{"--framework"}, true,
       [](CompileOptions& o, std::string_view v) {
         if (v != "XLA") return OptionError(absl::StrFormat("option --framework: invalid value '%s' (only XLA is supported)", v));
         o.framework = "XLA";
         return absl::OkStatus();
       }},
      {{"--target"}, true,
       [](CompileOptions& o, std::string_view v) {
         int dummy;
         absl::Status s = PickChoice("--target", v, kTargetsDummy, &dummy);
         if (s.ok()) {
           o.target = std::string(v);
           o.target_given = true;
         }
         return s;
       }},
      {{"--model-type"}, true,
       [](CompileOptions& o, std::string_view v) { return PickChoice("--model-type", v, kModelTypes, &o.model_type); }},
      {{"--auto-cast"}, true,
       [](CompileOptions& o, std::string_view v) { return PickChoice("--auto-cast", v, kAutoCasts, &o.auto_cast); }},
      {{"--auto-cast-type"}, true,
       [](CompileOptions& o, std::string_view v) {
         return PickChoice("--auto-cast-type", v, kAutoCastTypes, &o.auto_cast_type);
       }},
      {{"--enable-mixed-precision-accumulation"}, false,
       [](CompileOptions& o, std::string_view) {
         o.mixed_precision_accumulation = true;
         return absl::OkStatus();
       }},
      {{"--disable-mixed-precision-accumulation"}, false,
       [](CompileOptions& o, std::string_view) {
         o.mixed_precision_accumulation = false;
         return absl::OkStatus();
       }},
      {{"--optlevel", "-O"}, true,
       [](CompileOptions& o, std::string_view v) { return PickChoice("--optlevel", v, kOptLevels, &o.optlevel); }},
      {{"--logical-nc-config", "-lnc", "--lnc"}, true,
       [](CompileOptions& o, std::string_view v) {
         o.lnc_given = true;
         return PickChoice("--logical-nc-config", v, kLncs, &o.lnc);
       }},
      {{"--distribution-strategy"}, true,
       [](CompileOptions& o, std::string_view v) {
         int dummy;
         absl::Status s = PickChoice("--distribution-strategy", v, kStrategies, &dummy);
         if (s.ok()) o.distribution_strategy = "llm-training";  // NEMO is its old name
         return s;
       }},
      {{"--enable-fast-context-switch"}, false,
       [](CompileOptions& o, std::string_view) {
         o.fast_context_switch = true;
         return absl::OkStatus();
       }},
      {{"--enable-fast-loading-neuron-binaries"}, false,
       [](CompileOptions& o, std::string_view) {
         o.fast_loading = true;
         return absl::OkStatus();
       }},
      {{"--enable-saturate-infinity"}, false,
       [](CompileOptions& o, std::string_view) {
         o.saturate_infinity = true;
         return absl::OkStatus();
       }},
      {{"--output", "-o"}, true,
       [](CompileOptions& o, std::string_view v) {
         if (v.empty()) return OptionError("option --output: the path is empty");
         o.output = std::string(v);
         return absl::OkStatus();
       }},
      {{"--logfile"}, true,
       [](CompileOptions& o, std::string_view v) {
         o.logfile = std::string(v);
         return absl::OkStatus();
       }},
      {{"--verbose"}, true,
       [](CompileOptions& o, std::string_view v) {
         if (!v.empty() && v[0] >= '0' && v[0] <= '9') {
           absl::StatusOr<uint64_t> n = ParseUnsigned(v, 100);
           if (!n.ok()) return OptionError(absl::StrFormat("option --verbose: invalid level '%s' (0-100)", v));
           o.verbose = static_cast<int>(*n);
           return absl::OkStatus();
         }
         return PickChoice("--verbose", v, kLevels, &o.verbose);
       }},
      {{"--fill-elided-constants"}, true,
       [](CompileOptions& o, std::string_view v) {
         return PickChoice("--fill-elided-constants", v, kFills, &o.fill_elided);
       }},
      {{"--verify-each-pass"}, false,
       [](CompileOptions& o, std::string_view) {
         o.verify_each_pass = true;
         return absl::OkStatus();
       }},
      {{"--cache-dir", "--cache_dir"}, true,
       [](CompileOptions& o, std::string_view v) {
         o.cache_dir = std::string(v);
         return absl::OkStatus();
       }},
      {{"--no-cache", "--no_cache"}, false,
       [](CompileOptions& o, std::string_view) {
         o.no_cache = true;
         return absl::OkStatus();
       }},
      {{"--retry-failed-compilation", "--retry_failed_compilation"}, false,
       [](CompileOptions& o, std::string_view) {
         o.retry_failed_compilation = true;
         return absl::OkStatus();
       }},
      {{"--name"}, true,
       [](CompileOptions& o, std::string_view v) {
         o.name = std::string(v);
         return absl::OkStatus();
       }},
      // Seen in the wild (framework wrappers); accepted and ignored.
      {{"--execute-repetition"}, true,
       [](CompileOptions& o, std::string_view v) {
         if (!ParseUnsigned(v).ok()) {
           return OptionError(absl::StrFormat("option --execute-repetition: invalid count '%s'", v));
         }
         o.ignored.push_back("--execute-repetition=" + std::string(v));
         return absl::OkStatus();
       }},
      {{"--enable-internal-neff-wrapper"}, false,
       [](CompileOptions& o, std::string_view) {
         o.ignored.push_back("--enable-internal-neff-wrapper");
         return absl::OkStatus();
       }},
  };
  return *specs;
}

const OptionSpec* FindSpec(std::string_view name) {
  for (const OptionSpec& spec : Specs()) {
    for (const char* n : spec.names) {
      if (name == n) return &spec;
    }
  }
  return nullptr;
}

// Parses compile options from words; positional words go to `positional`.
absl::Status ParseCompileWords(const std::vector<std::string>& words, CompileOptions* o,
                               std::vector<std::string>* positional, bool* help) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--help" || w == "-h") {
      *help = true;
      continue;
    }
    if (w == "-" || w.empty() || w[0] != '-') {
      positional->push_back(w);
      continue;
    }
    std::string name = w, value;
    bool has_value = false;
    size_t eq = w.find('=');
    if (eq != std::string::npos) {
      name = w.substr(0, eq);
      value = w.substr(eq + 1);
      has_value = true;
    } else if (w.size() > 2 && w[0] == '-' && w[1] == 'O') {  // -O2
      name = "-O";
      value = w.substr(2);
      has_value = true;
    }
    const OptionSpec* spec = FindSpec(name);
    if (!spec) {
      return OptionError(absl::StrFormat("unrecognized option '%s' (see neuron-compile compile --help)", w));
    }
    if (spec->takes_value && !has_value) {
      if (i + 1 >= words.size()) return OptionError(absl::StrFormat("option %s needs a value", name));
      value = words[++i];
    } else if (!spec->takes_value && has_value) {
      return OptionError(absl::StrFormat("option %s takes no value", name));
    }
    if (absl::Status s = spec->handle(*o, value); !s.ok()) return s;
  }
  return absl::OkStatus();
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
  if (args.empty()) return parsed;  // help
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help") return parsed;
  if (first == "--version" || first == "-V") {
    parsed.command = Command::kVersion;
    return parsed;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (first == "list-operators") {
    parsed.command = Command::kListOperators;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == "--help" || rest[i] == "-h") {
        parsed.command = Command::kHelp;
        return parsed;
      }
      std::string value;
      if (rest[i] == "--framework" && i + 1 < rest.size()) {
        value = rest[++i];
      } else if (rest[i].rfind("--framework=", 0) == 0) {
        value = rest[i].substr(12);
      } else {
        return OptionError(absl::StrFormat("list-operators: unrecognized argument '%s'", rest[i]));
      }
      if (value != "XLA") {
        return OptionError(absl::StrFormat("list-operators: invalid --framework '%s' (only XLA)", value));
      }
    }
    return parsed;
  }
  if (first != "compile") {
    return OptionError(absl::StrFormat("unknown command '%s' (commands: compile, list-operators)", first));
  }
  parsed.command = Command::kCompile;
  CompileOptions& o = parsed.options;
  if (cache_url && !cache_url->empty()) {
    // Local paths only; an S3 URL would need credentials we do not handle.
    if (cache_url->find("://") == std::string::npos || cache_url->rfind("file://", 0) == 0) {
      o.cache_dir = cache_url->rfind("file://", 0) == 0 ? cache_url->substr(7) : *cache_url;
    } else {
      o.ignored.push_back(absl::StrCat("NEURON_COMPILE_CACHE_URL=", *cache_url, " (only local paths)"));
    }
  }
  std::vector<std::string> words;
  if (env_flags) {
    absl::StatusOr<std::vector<std::string>> env_words = SplitShellWords(*env_flags);
    if (!env_words.ok()) return env_words.status();
    words = std::move(*env_words);
  }
  words.insert(words.end(), rest.begin(), rest.end());
  std::vector<std::string> positional;
  bool help = false;
  if (absl::Status s = ParseCompileWords(words, &o, &positional, &help); !s.ok()) return s;
  if (help) {
    parsed.command = Command::kCompileHelp;
    return parsed;
  }
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
  return "usage: neuron-compile <command> [options]\n"
         "\n"
         "Compiles XLA HLO modules into NEFF executables for the Neuron runtime.\n"
         "\n"
         "commands:\n"
         "  compile FILE [options]           compile an HLO module (text or hlo.pb; - = stdin)\n"
         "  list-operators --framework XLA   print the supported operators, one per line\n"
         "\n"
         "options:\n"
         "  -h, --help                       show this help (compile --help: compile options)\n"
         "  -V, --version                    print the version\n"
         "\n"
         "environment: NEURON_CC_FLAGS (extra compile options, the command line wins),\n"
         "NEURON_COMPILE_CACHE_URL (compile cache directory). Error codes: docs/error-codes.md.\n";
}

std::string CompileHelp() {
  return "usage: neuron-compile compile FILE [options]\n"
         "\n"
         "FILE is HLO text or a binary HloModuleProto/HloProto (hlo.pb); - reads stdin.\n"
         "\n"
         "options (neuronx-cc's):\n"
         "  --framework XLA                  the input framework (only XLA)\n"
         "  --target {trn1,trn1n,inf2,trn2}  instance family to compile for (default trn1)\n"
         "  --model-type {generic,transformer,unet-inference}\n"
         "                                   model-family optimizations (default generic)\n"
         "  --auto-cast {none,matmult,all}   cast FP32 operations to --auto-cast-type (default none)\n"
         "  --auto-cast-type {bf16,fp16,tf32,fp8_e4m3}\n"
         "                                   type auto-cast casts to (default bf16)\n"
         "  --enable-mixed-precision-accumulation\n"
         "                                   accumulate cast operations in FP32 (default)\n"
         "  --disable-mixed-precision-accumulation\n"
         "                                   accumulate in the cast type\n"
         "  -O, --optlevel {1,2,3}           optimization level (default 2)\n"
         "  -lnc, --logical-nc-config {1,2}  physical cores per logical core, trn2 only (default 2\n"
         "                                   on trn2, 1 elsewhere)\n"
         "  --distribution-strategy llm-training\n"
         "                                   LLM training optimizations (recorded in the NEFF)\n"
         "  --enable-fast-context-switch     favor fast model switching (recorded in the NEFF)\n"
         "  --enable-fast-loading-neuron-binaries\n"
         "                                   uncompressed NEFF with page-aligned constants\n"
         "  --enable-saturate-infinity       converts to narrower floats saturate instead of inf\n"
         "  --output PATH                    NEFF to write (default file.neff; - = stdout)\n"
         "  --logfile PATH                   full log (default log-neuron-cc.txt; '' disables)\n"
         "  --verbose LEVEL                  debug, info, warning (default), error, critical, or\n"
         "                                   a number (Python logging level, e.g. 35)\n"
         "  --execute-repetition N, --enable-internal-neff-wrapper\n"
         "                                   accepted for compatibility and ignored\n"
         "\n"
         "options (neuron-compile's):\n"
         "  --cache-dir DIR                  compile cache directory (NEURON_COMPILE_CACHE_URL)\n"
         "  --no-cache                       do not read or write the compile cache\n"
         "  --retry-failed-compilation       compile again when the cache holds a failure\n"
         "  --fill-elided-constants {zeros,random}\n"
         "                                   give constants printed as {...} values\n"
         "  --verify-each-pass               verify the module after every pass\n"
         "  --name NAME                      model name in the NEFF header (default: module name)\n"
         "\n"
         "NEURON_CC_FLAGS holds options applied before the command line's (the right-most\n"
         "wins). Exit status: 0 success, 1 compile error, 2 usage error.\n";
}

}  // namespace neuron::compiler
