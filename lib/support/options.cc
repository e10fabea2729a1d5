#include "lib/support/options.h"

#include <algorithm>
#include <cstdio>

#include "lib/support/cli.h"

namespace neuron::cli {
namespace {

// std::string_view throughout: this Abseil's string_view is its own type.
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

template <typename... Parts>
void Append(std::string* out, const Parts&... parts) {
  (out->append(std::string_view(parts)), ...);
}

template <typename Words>
std::string Join(const Words& words, std::string_view separator) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out.append(separator);
    out.append(std::string_view(w));
  }
  return out;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0;;) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return lines;
    start = end + 1;
  }
}

// What every table gets without listing it.
const Option kHelp{'h', "help", Arg::kNone, "", "print this help"};
const Option kVersion{0, "version", Arg::kNone, "", "print the version"};
const Option kCompletion{0, "bash-completion", Arg::kNone, "", "print a bash completion script",
                         {}, {}, {}, {}, /*hidden=*/true};

bool IsHeading(const Option& o) {
  return o.short_name == 0 && o.long_name.empty() && o.aliases.empty();
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Finds the option spelled `spelling` (with its dashes, no value).
const Option* FindSpelling(const Command& c, std::string_view spelling) {
  for (const Option& o : c.options) {
    if (IsHeading(o)) continue;
    if (!o.long_name.empty() && spelling.size() == o.long_name.size() + 2 &&
        StartsWith(spelling, "--") && spelling.substr(2) == o.long_name) {
      return &o;
    }
    for (std::string_view a : o.aliases) {
      if (spelling == a) return &o;
    }
  }
  if (spelling == "--help") return &kHelp;
  if (spelling == "--version") return &kVersion;
  if (spelling == "--bash-completion") return &kCompletion;
  return nullptr;
}

const Option* FindShort(const Command& c, char letter) {
  for (const Option& o : c.options) {
    if (o.short_name == letter && letter != 0) return &o;
  }
  if (letter == 'h') return &kHelp;
  if (letter == c.version_short && letter != 0) return &kVersion;
  return nullptr;
}

// Parses one command's words from args[start]; with `stop_at_operand`
// returns at the first operand (the subcommand's name). Returns the index
// it stopped at (args.size() when it read everything).
size_t ParseCommand(const Command& c, const std::vector<std::string>& args, size_t start,
                    bool stop_at_operand, ParsedArgs* out) {
  auto fail = [&](std::string message) {
    out->action = ParsedArgs::kError;
    out->error = std::move(message);
    return args.size();
  };
  // Runs the handler; returns false (having recorded the error) on failure.
  auto apply = [&](const Option* o, std::string_view spelling, std::string_view value,
                   size_t first, size_t last) {
    if (o == &kHelp || o == &kVersion || o == &kCompletion) {
      out->action = o == &kHelp      ? ParsedArgs::kHelp
                    : o == &kVersion ? ParsedArgs::kVersion
                                     : ParsedArgs::kCompletion;
      return false;
    }
    out->spans.push_back({o, first, last - first + 1});
    if (!o->handle) return true;
    absl::Status s = o->handle(value);
    if (s.ok()) return true;
    out->action = ParsedArgs::kError;
    const std::string message(s.message());
    if (StartsWith(message, spelling) ||
        (!o->long_name.empty() && StartsWith(message, Cat("--", o->long_name)))) {
      out->error = message;  // it names the option already
    } else if (o->arg == Arg::kNone) {
      out->error = Cat(spelling, ": ", message);
    } else {
      out->error = Cat(spelling, " '", value, "': ", message);
    }
    return false;
  };
  // The words after args[*i] that a kOneOrMore option takes.
  auto take_more = [&](const Option* o, std::string_view spelling, size_t first, size_t* i) {
    const size_t before = *i;
    while (*i + 1 < args.size() && !StartsWith(args[*i + 1], "-") &&
           (*i == before || !o->more || o->more(args[*i + 1]))) {
      ++*i;
      if (!apply(o, spelling, args[*i], first, *i)) return false;
    }
    if (*i == before) {
      fail(Cat("option '", spelling, "' needs a value"));
      return false;
    }
    return true;
  };

  bool options_ended = false;
  for (size_t i = start; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (options_ended || w == "-" || w.empty() || w[0] != '-') {
      if (stop_at_operand) return i;
      out->operands.push_back(w);
      continue;
    }
    if (w == "--") {
      options_ended = true;
      continue;
    }
    // A long option or an alias, with or without "=VALUE".
    const size_t eq = w.find('=');
    const std::string_view spelling = std::string_view(w).substr(0, eq);
    const Option* o = FindSpelling(c, spelling);
    if (o == nullptr && StartsWith(w, "--")) {
      return fail(Cat("unknown option '", spelling, "'"));
    }
    if (o != nullptr) {
      const bool has_value = eq != std::string::npos;
      const std::string_view value = has_value ? std::string_view(w).substr(eq + 1) : "";
      switch (o->arg) {
        case Arg::kNone:
          if (has_value) return fail(Cat("option '", spelling, "' takes no value"));
          if (!apply(o, spelling, "", i, i)) return args.size();
          break;
        case Arg::kOptional:
          if (!apply(o, spelling, value, i, i)) return args.size();
          break;
        case Arg::kRequired:
          if (has_value) {
            if (!apply(o, spelling, value, i, i)) return args.size();
          } else if (i + 1 < args.size()) {
            ++i;
            if (!apply(o, spelling, args[i], i - 1, i)) return args.size();
          } else {
            return fail(Cat("option '", spelling, "' needs a value"));
          }
          break;
        case Arg::kOneOrMore:
          if (has_value) {
            if (!apply(o, spelling, value, i, i)) return args.size();
          } else if (!take_more(o, spelling, i, &i)) {
            return args.size();
          }
          break;
      }
      continue;
    }
    // Short options, bundled: -pj, -n5, -n 5.
    for (size_t j = 1; j < w.size(); ++j) {
      const std::string spelling_short = std::string("-") + w[j];
      const Option* s = FindShort(c, w[j]);
      if (s == nullptr) return fail(Cat("unknown option '", spelling_short, "'"));
      const std::string_view rest = std::string_view(w).substr(j + 1);
      if (s->arg == Arg::kNone) {
        if (!apply(s, spelling_short, "", i, i)) return args.size();
        continue;
      }
      if (!rest.empty() || s->arg == Arg::kOptional) {
        if (!apply(s, spelling_short, rest, i, i)) return args.size();
      } else if (s->arg == Arg::kRequired) {
        if (i + 1 >= args.size()) {
          return fail(Cat("option '", spelling_short, "' needs a value"));
        }
        ++i;
        if (!apply(s, spelling_short, args[i], i - 1, i)) return args.size();
      } else if (!take_more(s, spelling_short, i, &i)) {
        return args.size();
      }
      break;
    }
  }
  return args.size();
}

std::string CommandLine(const Command& c) {
  return c.name.empty() ? std::string(c.tool) : Cat(c.tool, " ", c.name);
}

// "  -i, --input NAME=FILE" for the help listing.
std::string LeftColumn(const Option& o) {
  std::vector<std::string> names;
  if (o.short_name != 0) names.push_back(std::string("-") + o.short_name);
  for (std::string_view a : o.aliases) {
    if (!StartsWith(a, "--")) names.emplace_back(a);
  }
  if (!o.long_name.empty()) names.push_back(Cat("--", o.long_name));
  std::string left = o.short_name != 0 ? "  " : "      ";
  left += Join(names, ", ");
  if (!o.metavar.empty()) {
    switch (o.arg) {
      case Arg::kNone: break;
      case Arg::kRequired: Append(&left, " ", o.metavar); break;
      case Arg::kOptional: Append(&left, "[=", o.metavar, "]"); break;
      case Arg::kOneOrMore: Append(&left, " ", o.metavar, "..."); break;
    }
  }
  return left;
}

// Rows of "left  help", the help's further lines under its first.
void AppendRows(const std::vector<std::pair<std::string, std::string_view>>& rows,
                std::string* out) {
  constexpr size_t kMaxLeft = 32;
  size_t width = 0;
  for (const auto& [left, help] : rows) {
    if (left.size() <= kMaxLeft) width = std::max(width, left.size());
  }
  const size_t column = width + 2;
  for (const auto& [left, help] : rows) {
    if (left.empty()) {  // a heading (or, without text, a blank line)
      Append(out, "\n", help, help.empty() ? "" : "\n");
      continue;
    }
    std::string line = left;
    bool first = true;
    for (std::string_view part : Lines(help)) {
      if (first && line.size() + 2 > column) {
        Append(out, line, "\n");
        line.clear();
      }
      if (!part.empty()) line.resize(std::max(line.size(), column), ' ');
      Append(out, line, part, "\n");
      line.clear();
      first = false;
    }
  }
}

std::string ShellWords(const std::vector<std::string>& words) { return Join(words, " "); }

// The completion of the current word from a hint: "file", "dir", words.
std::string CompleteHint(std::string_view hint) {
  if (hint == "file") return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))";
  if (hint == "dir") return "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))";
  if (hint.empty()) return "COMPREPLY=()";
  return Cat("COMPREPLY=($(compgen -W \"", hint, "\" -- \"$cur\"))");
}

// The completion of one command: option values, options, operands.
std::string CompletionBlock(const Command& c, const std::string& indent) {
  std::string out;
  std::vector<std::string> spellings;
  std::string value_cases;
  auto add = [&](const Option& o) {
    std::vector<std::string> names;
    if (o.short_name != 0) names.push_back(std::string("-") + o.short_name);
    if (!o.long_name.empty()) names.push_back(Cat("--", o.long_name));
    for (std::string_view a : o.aliases) names.emplace_back(a);
    if (!o.hidden) spellings.insert(spellings.end(), names.begin(), names.end());
    if (o.arg == Arg::kRequired || o.arg == Arg::kOneOrMore) {
      Append(&value_cases, indent, "  ", Join(names, "|"), ") ",
                      CompleteHint(o.complete), "; return ;;\n");
    }
  };
  for (const Option& o : c.options) {
    if (!IsHeading(o)) add(o);
  }
  add(kHelp);
  add(kVersion);
  if (c.version_short != 0) spellings.push_back(std::string("-") + c.version_short);
  if (!value_cases.empty()) {
    Append(&out, indent, "case \"$prev\" in\n", value_cases, indent, "esac\n");
  }
  Append(&out, indent, "if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W \"",
                  ShellWords(spellings), "\" -- \"$cur\")); return; fi\n");
  std::vector<std::string> subs;
  for (const Command& s : c.subcommands) subs.emplace_back(s.name);
  if (!subs.empty()) {
    Append(&out, indent, "COMPREPLY=($(compgen -W \"", ShellWords(subs),
                    "\" -- \"$cur\"))\n");
  } else if (c.max_operands > 0) {
    Append(&out, indent, CompleteHint(c.operand_complete), "\n");
  }
  return out;
}

}  // namespace

ParsedArgs ParseArgs(const Command& root, const std::vector<std::string>& args) {
  ParsedArgs out;
  out.command = &root;
  const bool has_subcommands = !root.subcommands.empty();
  size_t stop = ParseCommand(root, args, 0, has_subcommands, &out);
  if (out.action != ParsedArgs::kRun) return out;
  if (has_subcommands && stop < args.size()) {
    const std::string& name = args[stop];
    for (const Command& sub : root.subcommands) {
      if (sub.name != name) continue;
      out.command = &sub;
      ParseCommand(sub, args, stop + 1, false, &out);
      break;
    }
    if (out.command == &root) {
      std::vector<std::string_view> names;
      for (const Command& sub : root.subcommands) names.push_back(sub.name);
      out.action = ParsedArgs::kError;
      out.error = Cat("unknown command '", name, "' (", Join(names, ", "), ")");
      return out;
    }
  }
  if (out.action != ParsedArgs::kRun) return out;
  const Command& c = *out.command;
  if (out.operands.size() < c.min_operands) {
    out.action = ParsedArgs::kError;
    out.error = std::string(c.missing_operand);
  } else if (out.operands.size() > c.max_operands) {
    out.action = ParsedArgs::kError;
    out.error = Cat("unexpected argument '", out.operands[c.max_operands], "'");
  }
  return out;
}

int UsageError(const Command& command, std::string_view message) {
  PrintError(command.tool, message);
  const std::string hint = Cat("Try '", CommandLine(command), " --help'.\n");
  std::fputs(hint.c_str(), stderr);
  return kExitUsage;
}

int ParseCommandLine(const Command& root, const std::vector<std::string>& args,
                     ParsedArgs* parsed) {
  *parsed = ParseArgs(root, args);
  switch (parsed->action) {
    case ParsedArgs::kRun:
      return -1;
    case ParsedArgs::kHelp:
      std::fputs(HelpText(*parsed->command).c_str(), stdout);
      return kExitOk;
    case ParsedArgs::kVersion:
      PrintVersion(root.tool);
      return kExitOk;
    case ParsedArgs::kCompletion:
      std::fputs(BashCompletion(root).c_str(), stdout);
      return kExitOk;
    case ParsedArgs::kError:
      break;
  }
  return UsageError(*parsed->command, parsed->error);
}

int ParseCommandLine(const Command& root, int argc, char** argv, ParsedArgs* parsed) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return ParseCommandLine(root, args, parsed);
}

std::string HelpText(const Command& c) {
  std::string out = Cat("usage: ", CommandLine(c), " ", c.usage, "\n");
  if (!c.description.empty()) Append(&out, "\n", c.description, "\n");
  std::vector<std::pair<std::string, std::string_view>> rows;
  if (!c.subcommands.empty()) {
    rows.push_back({"", "commands:"});
    for (const Command& s : c.subcommands) {
      std::string_view summary = s.description.substr(0, s.description.find('\n'));
      rows.push_back({Cat("  ", s.name, " ", s.usage), summary});
    }
  }
  bool heading_first = !c.options.empty() && IsHeading(c.options.front());
  if (!heading_first) rows.push_back({"", c.subcommands.empty() ? "" : "options:"});
  for (const Option& o : c.options) {
    if (o.hidden) continue;
    rows.push_back({IsHeading(o) ? std::string() : LeftColumn(o), o.help});
  }
  Option version = kVersion;
  version.short_name = c.version_short;
  for (const Option* o : {&kHelp, static_cast<const Option*>(&version)}) {
    rows.push_back({LeftColumn(*o), o->help});
  }
  std::string listing;
  AppendRows(rows, &listing);
  Append(&out, listing);
  if (!c.notes.empty()) Append(&out, "\n", c.notes, "\n");
  return out;
}

std::string BashCompletion(const Command& root) {
  std::string function = Cat("_", root.tool);
  std::replace(function.begin(), function.end(), '-', '_');
  std::string out = Cat(
      "# bash completion for ", root.tool, " (from its option tables: ", root.tool,
      " --bash-completion)\n", function, "() {\n",
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" sub=\"\" i\n",
      "  ((COMP_CWORD > 0)) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n",
      "  # --opt=value: bash splits at '='.\n",
      "  if [[ \"$cur\" == \"=\" ]]; then cur=\"\";\n",
      "  elif [[ \"$prev\" == \"=\" ]] && ((COMP_CWORD > 1)); then prev=\"${COMP_WORDS[COMP_CWORD-2]}\"; fi\n");
  if (!root.subcommands.empty()) {
    std::vector<std::string> names;
    for (const Command& s : root.subcommands) names.emplace_back(s.name);
    Append(&out, "  for ((i = 1; i < COMP_CWORD; i++)); do\n",
                    "    case \"${COMP_WORDS[i]}\" in\n", "      ", Join(names, "|"),
                    ") sub=\"${COMP_WORDS[i]}\"; break ;;\n", "    esac\n", "  done\n");
    Append(&out, "  case \"$sub\" in\n");
    for (const Command& s : root.subcommands) {
      Append(&out, "    ", s.name, ")\n", CompletionBlock(s, "      "), "      ;;\n");
    }
    Append(&out, "    *)\n", CompletionBlock(root, "      "), "      ;;\n  esac\n");
  } else {
    Append(&out, CompletionBlock(root, "  "));
  }
  Append(&out, "}\ncomplete -F ", function, " ", root.tool, "\n");
  return out;
}

}  // namespace neuron::cli
