// One command-line convention for every tool: each tool (and subcommand)
// declares a table of options, and this one parser reads it, as LLVM's
// OptTable and toybox do. The same table yields --help and the bash
// completion, so what a tool accepts, prints and completes cannot drift.
//
// Behaviour (GNU getopt_long's): options anywhere among operands, "--" ends
// the options, "-" is an operand (stdin/stdout), "--opt=value" and
// "--opt value", bundled short flags ("-pj"), "-nVALUE". Long options must
// be spelled out (no prefixes). --help, --version and the hidden
// --bash-completion come with every table.
#ifndef NEURON_LIB_SUPPORT_OPTIONS_H_
#define NEURON_LIB_SUPPORT_OPTIONS_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace neuron::cli {

enum class Arg {
  kNone,       // a flag
  kRequired,   // --opt VALUE, --opt=VALUE, -oVALUE, -o VALUE
  kOptional,   // --opt or --opt=VALUE; -o or -oVALUE
  kOneOrMore,  // --opt V1 V2 ...: the following words that do not start
               // with '-' and that `more` accepts (argparse's nargs='+')
};

// Called with the option's value ("" for a flag; once per word for
// kOneOrMore). An error's message says what is wrong with the value; the
// parser prefixes the option and the value unless the message starts with
// the option's name already.
using Handler = std::function<absl::Status(std::string_view value)>;

struct Option {
  char short_name = 0;             // 0: none
  std::string_view long_name;      // without the dashes; "" when none
  Arg arg = Arg::kNone;
  std::string_view metavar;        // "FILE", "N", ...
  std::string_view help;           // '\n' starts an indented continuation
  Handler handle;
  // Completion of the value: "file", "dir", or words separated by spaces.
  std::string_view complete = {};
  // Other exact spellings with their dashes: "-lnc" (single-dash ones are
  // shown in --help), "--cache_dir" (double-dash ones are silent aliases).
  std::vector<std::string_view> aliases = {};
  // kOneOrMore: whether a further word still belongs to the option.
  std::function<bool(std::string_view word)> more = {};
  bool hidden = false;             // accepted, but not in --help
};

// A row of the --help listing that is a heading, not an option.
inline Option Heading(std::string_view text) {
  Option o;
  o.help = text;
  return o;
}

struct Command {
  std::string_view tool;           // "neuron-dump"
  std::string_view name;           // subcommand name; "" for the tool itself
  std::string_view usage;          // after "usage: TOOL [NAME] ", e.g. "FILE|- [options]"
  std::string_view description;    // a paragraph after the usage line
  std::vector<Option> options;
  std::string_view notes;          // text after the option list
  size_t min_operands = 0;
  size_t max_operands = static_cast<size_t>(-1);
  std::string_view missing_operand = "missing operand";  // the error then
  std::string_view operand_complete;  // "file", "dir", words, or ""
  char version_short = 0;          // e.g. 'V': -V is --version too
  // A tool with subcommands: its first operand picks one, and the rest of
  // the command line is that subcommand's.
  std::vector<Command> subcommands;
};

// Where an option occurrence was on the command line: args[first] to
// args[first + count - 1].
struct Span {
  const Option* option;
  size_t first, count;
};

struct ParsedArgs {
  enum Action { kRun, kHelp, kVersion, kCompletion, kError };
  Action action = kRun;
  const Command* command = nullptr;  // the one parsed (a subcommand once chosen)
  std::vector<std::string> operands;
  std::vector<Span> spans;           // indices into the args given
  std::string error;                 // kError: what is wrong
};

// Parses args (argv without the program name) against `root` and, when an
// operand names one of its subcommands, the rest against that subcommand.
// Runs each option's handler as it is met. Prints nothing.
ParsedArgs ParseArgs(const Command& root, const std::vector<std::string>& args);

// ParseArgs, then the convention's output: --help on stdout (exit 0),
// --version (exit 0), --bash-completion (exit 0), or a usage error as
// "TOOL: error: ..." and "Try 'TOOL [SUB] --help'." on stderr (exit 2).
// Returns -1 when the tool should go on with *parsed, else the exit status.
int ParseCommandLine(const Command& root, int argc, char** argv, ParsedArgs* parsed);
int ParseCommandLine(const Command& root, const std::vector<std::string>& args,
                     ParsedArgs* parsed);

// Prints a usage error found after parsing (a missing required option, a
// conflict) for `command` in the convention's two lines; returns 2.
int UsageError(const Command& command, std::string_view message);

// The --help text of a command.
std::string HelpText(const Command& command);

// A bash completion script for the tool and its subcommands; sourcing it
// defines _<tool> (dashes as underscores) and binds it with `complete -F`.
std::string BashCompletion(const Command& root);

}  // namespace neuron::cli

#endif  // NEURON_LIB_SUPPORT_OPTIONS_H_
