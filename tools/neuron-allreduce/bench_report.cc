#include "tools/neuron-allreduce/bench_report.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace neuron::collectives {
namespace {

using nlohmann::json;

absl::Status Missing(const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("not a neuron-allreduce report: ", what, " is missing or of the wrong type"));
}

}  // namespace

absl::StatusOr<BenchReport> ParseBenchReport(std::string_view json_text) {
  json doc = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError("not a neuron-allreduce report: not valid JSON");
  }
  if (!doc.is_object()) return Missing("the top-level object");
  BenchReport r;
  if (!doc.contains("op") || !doc["op"].is_string()) return Missing("\"op\"");
  r.op = doc["op"].get<std::string>();
  if (doc.contains("reduction") && doc["reduction"].is_string()) {
    r.reduction = doc["reduction"].get<std::string>();
  }
  if (doc.contains("nranks") && doc["nranks"].is_number_integer()) r.nranks = doc["nranks"].get<int>();
  if (doc.contains("nnodes") && doc["nnodes"].is_number_integer()) r.nnodes = doc["nnodes"].get<int>();
  if (doc.contains("transport") && doc["transport"].is_string()) {
    r.transport = doc["transport"].get<std::string>();
  }
  if (!doc.contains("results") || !doc["results"].is_array()) return Missing("\"results\"");
  size_t k = 0;
  for (const json& row : doc["results"]) {
    const std::string where = absl::StrCat("results[", k++, "]");
    if (!row.is_object()) return Missing(where);
    BenchReportRow out;
    if (!row.contains("size(B)") || !row["size(B)"].is_number_unsigned()) {
      return Missing(absl::StrCat(where, " \"size(B)\""));
    }
    out.size = row["size(B)"].get<uint64_t>();
    if (!row.contains("type") || !row["type"].is_string()) {
      return Missing(absl::StrCat(where, " \"type\""));
    }
    out.type = row["type"].get<std::string>();
    if (!row.contains("busbw(GB/s)") || !row["busbw(GB/s)"].is_number()) {
      return Missing(absl::StrCat(where, " \"busbw(GB/s)\""));
    }
    out.busbw_gbs = row["busbw(GB/s)"].get<double>();
    if (!row.contains("time:avg(us)") || !row["time:avg(us)"].is_number()) {
      return Missing(absl::StrCat(where, " \"time:avg(us)\""));
    }
    out.avg_us = row["time:avg(us)"].get<double>();
    r.rows.push_back(std::move(out));
  }
  return r;
}

absl::StatusOr<BenchReport> ReadBenchReport(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read '", path, "': ", std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat("cannot read '", path, "': ", std::strerror(errno)));
  }
  absl::StatusOr<BenchReport> r = ParseBenchReport(text.str());
  if (!r.ok()) {
    return absl::Status(r.status().code(), absl::StrCat("'", path, "': ", r.status().message()));
  }
  return r;
}

}  // namespace neuron::collectives
