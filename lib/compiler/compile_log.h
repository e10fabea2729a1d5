// The compiler's log: every message goes to the log buffer (written to
// --logfile); messages at or above the --verbose level also go to the
// console, info/debug to stdout and the rest to stderr as neuronx-cc does
// (all to stderr when the NEFF itself goes to stdout).
#ifndef NEURON_LIB_COMPILER_COMPILE_LOG_H_
#define NEURON_LIB_COMPILER_COMPILE_LOG_H_

#include <cstdio>
#include <string>
#include <string_view>

namespace neuron::compiler {

class CompileLog {
 public:
  // A log that prints nothing to the console (in-process compiles).
  CompileLog() = default;
  CompileLog(int console_level, bool stdout_is_output)
      : console_level_(console_level), console_(true), stdout_is_output_(stdout_is_output) {}

  void Log(int level, std::string_view message);
  // To the log file only (the caller prints the message itself).
  void Record(int level, std::string_view message);
  void Debug(std::string_view m) { Log(10, m); }
  void Info(std::string_view m) { Log(20, m); }
  void Warning(std::string_view m) { Log(30, m); }

  // Everything logged, one "LEVEL: message" line each.
  const std::string& text() const { return text_; }

 private:
  int console_level_ = 100;
  bool console_ = false;
  bool stdout_is_output_ = false;
  std::string text_;
};

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_COMPILE_LOG_H_
