#include "lib/support/cli.h"

#include <cstdio>
#include <new>
#include <string>

#include "neuron/version.h"

namespace neuron {
namespace {

void PrintLine(FILE* out, std::string_view tool, std::string_view kind,
               std::string_view message) {
  // One write so lines from concurrent processes do not interleave.
  std::string line;
  line.reserve(tool.size() + kind.size() + message.size() + 4);
  line.append(tool).append(": ").append(kind).append(": ").append(message);
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace

void PrintError(std::string_view tool, std::string_view message) {
  PrintLine(stderr, tool, "error", message);
}

void PrintWarning(std::string_view tool, std::string_view message) {
  PrintLine(stderr, tool, "warning", message);
}

int UsageError(std::string_view tool, std::string_view message) {
  PrintError(tool, message);
  std::string hint = "Try '";
  hint.append(tool).append(" --help'.\n");
  std::fputs(hint.c_str(), stderr);
  return kExitUsage;
}

int RunGuarded(std::string_view tool, const std::function<int()>& work) {
  try {
    return work();
  } catch (const std::bad_alloc&) {
    PrintError(tool, "out of host memory (NRT_FAIL_HOST_MEM_ALLOC)");
    return kExitFailure;
  }
}

void PrintVersion(std::string_view tool) {
  std::string line(tool);
  line += " (neuron-tools) " NEURON_TOOLS_VERSION "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
}

}  // namespace neuron
