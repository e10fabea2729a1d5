// Runs a built tool as a child process for end-to-end tests: arguments,
// extra environment, optional stdin; captures stdout, stderr, exit status.
#ifndef NEURON_TESTS_SUPPORT_TOOL_RUNNER_H_
#define NEURON_TESTS_SUPPORT_TOOL_RUNNER_H_

#include <map>
#include <string>
#include <vector>

namespace neuron::testing {

struct ToolResult {
  int exit_code = -1;    // exit status, or 128+signal when killed
  bool signaled = false; // true when the child died of a signal (a crash)
  std::string out;
  std::string err;
};

struct ToolOptions {
  // Variables set (or, with an empty optional value, unset) for the child.
  std::map<std::string, std::string> env;
  std::vector<std::string> unset_env;
  // When true, every NEURON_* variable of the test's environment is removed
  // first, so tests do not depend on the developer's shell.
  bool clean_neuron_env = true;
  std::string stdin_data;
  std::string cwd;
};

// Directory holding the built tools (the directory of the test binary).
std::string ToolDir();

// Runs out/<tool> with args.
ToolResult RunTool(const std::string& tool, const std::vector<std::string>& args,
                   const ToolOptions& options = {});

// Path of ../shared relative to the repository, or "" when absent.
std::string SharedDir();

// The repository root (the directory above out/), found from ToolDir().
std::string SourceRoot();

// A fresh temporary directory, removed at process exit.
std::string MakeTempDir();

}  // namespace neuron::testing

// Skips the current test with a visible notice when ../shared is missing.
#define NEURON_REQUIRE_SHARED()                                          \
  do {                                                                   \
    if (::neuron::testing::SharedDir().empty()) {                        \
      GTEST_SKIP() << "NOTICE: ../shared is absent; skipping this test"; \
    }                                                                    \
  } while (0)

#endif  // NEURON_TESTS_SUPPORT_TOOL_RUNNER_H_
