// nrt_stress: a seeded random client of the C API, run by
// tests/checks/stress.sh (plain, and under the sanitizers). Runs for --seconds in init/close cycles: each
// cycle loads the add model on both cores, lets --threads workers
// (stress_worker.h) call libnrt at random for up to two seconds, frees
// everything and checks that each core's device memory is back at its
// figure after nrt_init before nrt_close. Prints one summary line; any
// failure is one line each and exit status 1.
//
//   nrt_stress [--seconds S] [--seed N] [--threads T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "nrt/nrt.h"
#include "tests/runtime/test_neff.h"
#include "tests/stress/stress_worker.h"

namespace neuron::stress {
namespace {

struct Options {
  double seconds = 20;
  uint64_t seed = 1;
  int threads = 4;
};

bool ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (a == "--seconds") {
      o->seconds = std::atof(v);
    } else if (a == "--seed") {
      o->seed = std::strtoull(v, nullptr, 10);
    } else if (a == "--threads") {
      o->threads = std::atoi(v);
    } else {
      return false;
    }
  }
  return o->seconds > 0 && o->threads > 0;
}

// Each visible core's device memory in use.
std::vector<size_t> MemoryInUse(uint32_t cores, Report* report) {
  std::vector<size_t> used;
  for (uint32_t vnc = 0; vnc < cores; ++vnc) {
    nrt_vnc_memory_stats_t stats{};
    size_t size_out = 0;
    if (nrt_get_vnc_memory_stats(vnc, &stats, sizeof stats, &size_out) != NRT_SUCCESS) {
      report->Fail(absl::StrFormat("nrt_get_vnc_memory_stats(%d): %s", vnc, nrt_get_last_error()));
    }
    used.push_back(stats.bytes_used);
  }
  return used;
}

// One init/close cycle of `seconds`; false when it could not start.
bool Cycle(const Options& o, const std::string& neff, int cycle, double seconds, Report* report) {
  if (nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") != NRT_SUCCESS) {
    report->Fail(absl::StrFormat("nrt_init: %s", nrt_get_last_error()));
    return false;
  }
  uint32_t cores = 0;
  nrt_get_visible_vnc_count(&cores);
  const std::vector<size_t> before = MemoryInUse(cores, report);
  std::vector<nrt_model_t*> models(cores, nullptr);
  for (uint32_t vnc = 0; vnc < cores; ++vnc) {
    if (nrt_load(neff.data(), neff.size(), static_cast<int32_t>(vnc), -1, &models[vnc]) !=
        NRT_SUCCESS) {
      report->Fail(absl::StrFormat("nrt_load on vnc %d: %s", vnc, nrt_get_last_error()));
    }
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  for (int i = 0; i < o.threads && models[i % cores] != nullptr; ++i) {
    threads.emplace_back([&, i] {
      // Seeds differ per thread and cycle, and follow from --seed alone.
      const uint64_t seed = o.seed * 1000003 + static_cast<uint64_t>(cycle) * 101 + i;
      Worker w(seed, static_cast<int>(i % cores), models[i % cores], &neff, report);
      if (!w.Setup()) return;
      while (std::chrono::steady_clock::now() < end) w.Step();
    });
  }
  for (std::thread& t : threads) t.join();
  for (nrt_model_t* m : models) {
    if (m != nullptr) nrt_unload(m);
  }
  const std::vector<size_t> after = MemoryInUse(cores, report);
  for (uint32_t vnc = 0; vnc < cores; ++vnc) {
    if (after[vnc] != before[vnc]) {
      report->Fail(absl::StrFormat("cycle %d: vnc %d has %d bytes of device memory in use after "
                                   "everything was freed, %d after nrt_init",
                                   cycle, vnc, after[vnc], before[vnc]));
    }
  }
  nrt_close();
  return true;
}

int Main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, &o)) {
    std::fprintf(stderr, "usage: nrt_stress [--seconds S] [--seed N] [--threads T]\n");
    return 2;
  }
  absl::StatusOr<std::string> neff = testing::BuildTestNeff(AddModelHlo());
  if (!neff.ok()) {
    std::fprintf(stderr, "nrt_stress: cannot build the add model: %s\n",
                 std::string(neff.status().message()).c_str());
    return 1;
  }
  Report report;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int cycles = 0;
  std::mt19937_64 rng(o.seed);
  while (elapsed() < o.seconds) {
    // Cycles of 0.5 to 2 s, the last cut to what is left.
    const double length = std::min(0.5 + static_cast<double>(rng() % 1500) / 1000,
                                   o.seconds - elapsed());
    if (!Cycle(o, *neff, cycles, length, &report)) break;
    ++cycles;
  }
  std::printf("nrt_stress: seed %llu, %d threads, %.0f s: %llu calls (%llu invalid), %llu "
              "executions checked, %llu loads, %d init/close cycles, %zu failures\n",
              static_cast<unsigned long long>(o.seed), o.threads, elapsed(),
              static_cast<unsigned long long>(report.calls),
              static_cast<unsigned long long>(report.invalid_calls),
              static_cast<unsigned long long>(report.executions),
              static_cast<unsigned long long>(report.loads), cycles, report.failures.size());
  for (const std::string& f : report.failures) std::printf("nrt_stress: FAIL %s\n", f.c_str());
  return report.failures.empty() && cycles > 0 ? 0 : 1;
}

}  // namespace
}  // namespace neuron::stress

int main(int argc, char** argv) { return neuron::stress::Main(argc, argv); }
