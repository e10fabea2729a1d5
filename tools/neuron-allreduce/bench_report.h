// neuron-allreduce's JSON report (--report-to-json-file, --json) read back:
// what the pictures of --plot draw, for this run and for earlier reports
// given to --plot-compare.
#ifndef NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_REPORT_H_
#define NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::collectives {

struct BenchReportRow {
  uint64_t size = 0;  // bytes
  std::string type;   // uint8, fp32, ...
  double busbw_gbs = 0;
  double avg_us = 0;
};

struct BenchReport {
  std::string op;         // allr, allg, redsct, sendrecv, permute
  std::string reduction;  // sum, prod, max, min
  int nranks = 0, nnodes = 0;
  std::string transport;
  std::vector<BenchReportRow> rows;
};

// Parses a report; the error says which field is missing or wrong.
absl::StatusOr<BenchReport> ParseBenchReport(std::string_view json_text);

// Reads and parses the report at `path`; errors name the file.
absl::StatusOr<BenchReport> ReadBenchReport(const std::string& path);

// An earlier report to draw beside this run's, named by the path given.
struct ComparedReport {
  std::string path;
  BenchReport report;
};

}  // namespace neuron::collectives

#endif  // NEURON_TOOLS_NEURON_ALLREDUCE_BENCH_REPORT_H_
