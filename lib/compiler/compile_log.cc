#include "lib/compiler/compile_log.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/compiler/options.h"

namespace neuron::compiler {

void CompileLog::Record(int level, std::string_view message) {
  std::string stamp = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  absl::StrAppend(&text_, stamp, " ", absl::AsciiStrToUpper(std::string(LogLevelName(level))), ": ",
                  std::string(message), "\n");
}

void CompileLog::Log(int level, std::string_view message) {
  Record(level, message);
  std::string name(LogLevelName(level));
  if (!console_ || level < console_level_) return;
  FILE* stream = (level < kWarning && !stdout_is_output_) ? stdout : stderr;
  std::string line = absl::StrCat("neuron-compile: ", name, ": ", std::string(message), "\n");
  fwrite(line.data(), 1, line.size(), stream);
  fflush(stream);
}

}  // namespace neuron::compiler
