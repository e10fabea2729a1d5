// Writes one device profile of N per-instruction spans (default 2,000,000)
// through lib/profile's Trace in each format and prints, per format, the
// time to record the spans, the time to write the file, and its size:
//   FORMAT RECORD_S WRITE_S BYTES
// Each format is written ROUNDS times (default 3), the order alternating so
// neither always follows the other's page-cache writeback; the times are
// the best of the rounds (the machine is shared).
// The spans look like the profiler's: 3000 distinct HLO instructions with
// their args text (hlo, opcode, computation, bytes, flops), on the compute
// and dma tracks of two cores, one execution span per 3000 instructions.
// Usage: profile_format [SPANS] [DIR] [ROUNDS]   (bench/profile_format.sh runs it)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/profile/trace.h"

namespace {

using neuron::config::ProfileFormat;
using Clock = std::chrono::steady_clock;

constexpr int kInstructions = 3000;
constexpr int kDevicePid = 1 << 30;  // as lib/profile/profiler.cc
const char* const kOpcodes[] = {"fusion", "dot", "add", "transpose", "reduce", "copy"};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

struct Result {
  double record_s = 1e30, write_s = 1e30;
  long long bytes = 0;
};

void Run(ProfileFormat format, long spans, const std::string& dir, Result* best) {
  std::vector<std::string> names, args;
  for (int i = 0; i < kInstructions; ++i) {
    const char* opcode = kOpcodes[i % 6];
    names.push_back(absl::StrFormat("%s.%d", opcode, i));
    args.push_back(absl::StrFormat(
        R"({"hlo":"%s","opcode":"%s","computation":"main","bytes":%d,"flops":%d})", names.back(),
        opcode, 4096 * (1 + i % 17), 2 * 256 * 256 * (i % 5)));
  }
  const auto start = Clock::now();
  neuron::profile::Trace trace(format);
  trace.NameProcess(kDevicePid, "Neuron device nd0 (simulated)", 0);
  for (int core = 0; core < 2; ++core) {
    trace.NameThread(kDevicePid, core * 8, absl::StrFormat("nc%d exec", core), core * 8);
    trace.NameThread(kDevicePid, core * 8 + 1, absl::StrFormat("nc%d compute", core), core * 8 + 1);
    trace.NameThread(kDevicePid, core * 8 + 2, absl::StrFormat("nc%d dma", core), core * 8 + 2);
  }
  // Nanosecond times a few seconds into the process, as NowNs gives them.
  int64_t now = 5'123'456'789;
  int64_t exec_begin = now;
  for (long i = 0; i < spans; ++i) {
    const int k = static_cast<int>(i % kInstructions);
    const int core = static_cast<int>((i / kInstructions) % 2);
    const int64_t duration = 300 + (i * 7919) % 1700;
    const int track = kOpcodes[k % 6][0] == 't' || kOpcodes[k % 6][0] == 'c' ? 2 : 1;
    trace.SpanWithArgsText(kDevicePid, core * 8 + track, names[k], track == 2 ? "dma" : "compute",
                           now, duration, args[k]);
    now += duration + 40;
    if (k == kInstructions - 1) {
      trace.Span(kDevicePid, core * 8, "model", "exec", exec_begin, now - exec_begin,
                 {{"core", core}});
      exec_begin = now;
    }
  }
  trace.other_data()["profile"] = "device";
  const double record_s = Seconds(start);
  const std::string path =
      dir + "/device_profile" + neuron::profile::ProfileFileExtension(format);
  const auto write_start = Clock::now();
  if (absl::Status s = trace.WriteFile(path); !s.ok()) {
    std::fprintf(stderr, "profile_format: %s\n", std::string(s.message()).c_str());
    std::exit(1);
  }
  const double write_s = Seconds(write_start);
  struct stat st {};
  stat(path.c_str(), &st);
  best->record_s = std::min(best->record_s, record_s);
  best->write_s = std::min(best->write_s, write_s);
  best->bytes = static_cast<long long>(st.st_size);
  std::remove(path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const long spans = argc > 1 ? std::atol(argv[1]) : 2000000;
  const std::string dir = argc > 2 ? argv[2] : ".";
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  if (spans <= 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: profile_format [SPANS] [DIR] [ROUNDS]\n");
    return 2;
  }
  Result json, pftrace;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      Run(ProfileFormat::kJson, spans, dir, &json);
      Run(ProfileFormat::kPftrace, spans, dir, &pftrace);
    } else {
      Run(ProfileFormat::kPftrace, spans, dir, &pftrace);
      Run(ProfileFormat::kJson, spans, dir, &json);
    }
  }
  for (const auto& [name, r] : {std::pair{"json", json}, std::pair{"pftrace", pftrace}})
    std::printf("%s %.3f %.3f %lld\n", name, r.record_s, r.write_s, r.bytes);
  return 0;
}
