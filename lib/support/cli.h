// Conventions every tool shares: how errors are printed and what exit
// statuses mean (documented in each man page under EXIT STATUS).
#ifndef NEURON_LIB_SUPPORT_CLI_H_
#define NEURON_LIB_SUPPORT_CLI_H_

#include <functional>
#include <string_view>

namespace neuron {

enum ExitCode : int {
  kExitOk = 0,       // the work succeeded
  kExitFailure = 1,  // the work failed (bad input file, runtime error, ...)
  kExitUsage = 2,    // the command line was wrong
};

// Prints "<tool>: error: <message>" as one line on stderr.
void PrintError(std::string_view tool, std::string_view message);

// Prints "<tool>: warning: <message>" as one line on stderr.
void PrintWarning(std::string_view tool, std::string_view message);

// Prints the error and a "Try '<tool> --help'." hint; returns kExitUsage.
int UsageError(std::string_view tool, std::string_view message);

// Runs a tool's work; host out-of-memory (a model or input too large for
// this host) becomes one error line and kExitFailure instead of a crash.
int RunGuarded(std::string_view tool, const std::function<int()>& work);

// Prints "<tool> (neuron-tools) <version>" on stdout.
void PrintVersion(std::string_view tool);

}  // namespace neuron

#endif  // NEURON_LIB_SUPPORT_CLI_H_
