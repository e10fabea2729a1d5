// The oracle test: every corpus module that loads, verifies and runs on
// one device is evaluated by the independent numpy evaluator
// (shared/oracle/hlo_ref.py) and by our executor on the same random
// inputs; outputs must agree within per-type tolerances. Prints the tally.
// Every module the oracle evaluates must match: a mismatch, a run error or a
// module our executor will not build fails the test unless it is listed in
// tests/support/corpus_known.cc with its reason. Modules the oracle cannot
// evaluate (unsupported, an exception of its own) or that run past its time
// limit are counted apart; matched plus those has a floor.
//
// Modules larger than kMaxModuleBytes are skipped to keep the suite fast
// (the oracle is pure Python); the oracle gets kOracleTimeoutS seconds per
// module and runs in two processes, each evaluating every other module.
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/hlo/verifier.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/executable.h"
#include "lib/support/npy.h"
#include "lib/tensorfile/npy_array.h"
#include "tests/support/corpus_known.h"
#include "tests/support/tool_runner.h"

namespace neuron::kernels {
namespace {

using ET = hlo::ElementType;

constexpr int64_t kMaxModuleBytes = 64 * 1024;
constexpr int kOracleTimeoutS = 10;
// Measured 2026-12-05 at the default size cap over two runs: 182
// candidates; 140 and 139 matched, 0 value mismatches, 5 refused by our
// executor (known, in corpus_known.cc); apart: 31 the oracle does not
// support, 6 and 7 over its 10 s (the oracle's time, which moves with the
// machine's load). Later runs: 138 + 8 (loaded), and 141 + 4 with 32
// unsupported: the oracle's verdict on a module can move between its time
// limit and "unsupported" too. Mismatches and unlisted refusals of ours fail
// on their own, so the floor only guards that the candidates keep being
// judged: matched, or set aside by the oracle (177 every time).
constexpr int kMinMatchedOrSetAsideByTheOracle = 177;

std::optional<ET> TypeOfDescr(const std::string& d) {
  static const std::map<std::string, ET> kMap = {
      {"<f4", ET::kF32}, {"<f8", ET::kF64}, {"<f2", ET::kF16}, {"|i1", ET::kS8},
      {"<i1", ET::kS8},  {"<i2", ET::kS16}, {"<i4", ET::kS32}, {"<i8", ET::kS64},
      {"|u1", ET::kU8},  {"<u1", ET::kU8},  {"<u2", ET::kU16}, {"<u4", ET::kU32},
      {"<u8", ET::kU64}, {"|b1", ET::kPred}, {"|V2", ET::kBF16},
      {"<c8", ET::kC64}, {"<c16", ET::kC128}};
  auto it = kMap.find(d);
  if (it == kMap.end()) return std::nullopt;
  return it->second;
}

// The .npy array as a tensor of `want` (converting values when the oracle
// wrote another dtype, e.g. f32 for bf16).
absl::StatusOr<Tensor> ToTensor(const npy::Array& a, const Tensor& spec) {
  std::optional<ET> t = TypeOfDescr(a.descr);
  if (!t) return absl::InvalidArgumentError(absl::StrCat("dtype ", a.descr));
  std::vector<int64_t> dims = spec.dims();
  if (a.element_count() != spec.element_count())
    return absl::InvalidArgumentError(absl::StrCat("element count ", a.element_count(), " vs ", spec.element_count()));
  Tensor out(spec.type(), dims);
  if (*t == spec.type() || (hlo::StorageBytes(*t) == hlo::StorageBytes(spec.type()) &&
                            DomainOf(*t) == Domain::kI64 && DomainOf(spec.type()) == Domain::kI64 &&
                            *t == spec.type())) {
    std::memcpy(out.data(), a.data.data(), out.byte_size());
    return out;
  }
  for (int64_t i = 0; i < out.element_count(); ++i) {
    if (DomainOf(*t) == Domain::kI64 && DomainOf(spec.type()) == Domain::kI64)
      StoreInt(spec.type(), out.data(), i, LoadInt(*t, a.data.data(), i));
    else
      StoreDouble(spec.type(), out.data(), i, LoadDouble(*t, a.data.data(), i));
  }
  return out;
}

struct Tolerance {
  double rtol, atol;
};

Tolerance ToleranceFor(ET type) {
  switch (type) {
    case ET::kF64: return {1e-9, 1e-12};
    case ET::kF32: return {1e-4, 1e-5};
    case ET::kBF16: return {1.0 / 64, 1.0 / 128};  // 2 ulps of bf16 (8 bits)
    case ET::kF16: return {1.0 / 512, 1.0 / 1024}; // 2 ulps of f16 (11 bits)
    default:
      if (hlo::IsFloatingPoint(type)) return {0.25, 0.125};  // f8: 2 ulps of 3 bits
      return {0, 0};
  }
}

// Empty when equal; otherwise the worst element.
std::string Compare(const Tensor& ours, const npy::Array& ref) {
  if (hlo::IsComplex(ours.type()) && (ref.descr == "<c8" || ref.descr == "<c16")) {
    // Compare real and imaginary parts as an array of twice the length.
    ET part = hlo::ComplexComponentType(ours.type());
    Tensor parts = Tensor::Borrow(part, {ours.element_count() * 2}, const_cast<uint8_t*>(ours.data()));
    npy::Array ref_parts = ref;
    ref_parts.descr = ref.descr == "<c8" ? "<f4" : "<f8";
    ref_parts.shape = {ref.element_count() * 2};
    return Compare(parts, ref_parts);
  }
  std::optional<ET> rt = TypeOfDescr(ref.descr);
  if (!rt) return absl::StrCat("reference dtype ", ref.descr);
  if (ref.element_count() != ours.element_count())
    return absl::StrCat("element count ", ours.element_count(), " vs reference ", ref.element_count());
  Tolerance tol = ToleranceFor(ours.type());
  // Long reductions: allow error relative to the output's overall scale.
  double scale = 0;
  for (int64_t i = 0; i < ours.element_count(); ++i) {
    double r = LoadDouble(*rt, ref.data.data(), i);
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
  }
  double worst = 0;
  int64_t worst_i = -1;
  double worst_ours = 0, worst_ref = 0;
  for (int64_t i = 0; i < ours.element_count(); ++i) {
    double o = LoadDouble(ours.type(), ours.data(), i);
    double r = LoadDouble(*rt, ref.data.data(), i);
    if (DomainOf(ours.type()) == Domain::kI64) {
      int64_t oi = LoadInt(ours.type(), ours.data(), i), ri = LoadInt(*rt, ref.data.data(), i);
      if (oi != ri && worst_i < 0) { worst_i = i; worst_ours = static_cast<double>(oi); worst_ref = static_cast<double>(ri); worst = 1; }
      continue;
    }
    if (std::isnan(o) && std::isnan(r)) continue;
    if (std::isinf(r) || std::isinf(o)) {
      if (o != r && worst < 1e300) { worst = 1e300; worst_i = i; worst_ours = o; worst_ref = r; }
      continue;
    }
    double err = std::fabs(o - r);
    double allowed = tol.atol * std::max(1.0, scale * 1e-1) + tol.rtol * std::fabs(r);
    if (std::isnan(o) || std::isnan(r)) err = 1e300;
    if (err > allowed) {
      double excess = err / (allowed > 0 ? allowed : 1e-300);
      if (excess > worst) { worst = excess; worst_i = i; worst_ours = o; worst_ref = r; }
    }
  }
  if (worst_i < 0) return "";
  return absl::StrFormat("element %d: ours %.9g, reference %.9g", worst_i, worst_ours, worst_ref);
}

struct Candidate {
  std::string path, name, dir;
  int oracle_rc = -1;
  std::string oracle_msg;
};

std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(OracleTest, CorpusMatchesReferenceEvaluator) {
  NEURON_REQUIRE_SHARED();
  const std::string shared = neuron::testing::SharedDir();
  const std::string oracle = shared + "/oracle/hlo_ref.py";
  if (!std::filesystem::exists(oracle) || !std::filesystem::exists("/usr/bin/python3"))
    GTEST_SKIP() << "NOTICE: oracle or /usr/bin/python3 absent";
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "NOTICE: numpy missing for /usr/bin/python3";
  const char* cache = std::getenv("NEURON_ORACLE_CACHE");
  const std::string tmp = cache && *cache ? std::string(cache) : neuron::testing::MakeTempDir();

  // NEURON_ORACLE_MAX_BYTES raises the size cap for a fuller (slower) run.
  int64_t max_bytes = kMaxModuleBytes;
  if (const char* m = std::getenv("NEURON_ORACLE_MAX_BYTES")) max_bytes = std::atoll(m);
  std::vector<Candidate> cands;
  int too_big = 0, not_loadable = 0, multi_device = 0;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(shared + "/hlo"))
    if (e.path().extension() == ".hlo") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    if (static_cast<int64_t>(std::filesystem::file_size(f)) > max_bytes) { ++too_big; continue; }
    auto m = hlo::LoadModuleFromFile(f);
    if (!m.ok() || !hlo::Verify(**m).ok()) { ++not_loadable; continue; }
    if ((*m)->NeedsMultipleDevices()) { ++multi_device; continue; }
    Candidate c;
    c.path = f;
    c.name = std::filesystem::path(f).stem().string();
    c.dir = tmp + "/" + c.name;
    cands.push_back(c);
  }

  // The oracle, in two Python processes (one per core) that each import it
  // once and take every other module (tests/kernels/oracle_batch.py).
  auto result_of = [](Candidate& c, const std::string& log, int rc) {
    c.oracle_msg = ReadText(log);
    c.oracle_rc = rc;
  };
  std::vector<std::string> jobs(2);
  std::vector<Candidate*> pending;
  for (Candidate& c : cands) {
    const std::string log = c.dir + ".log";
    if (cache && std::filesystem::exists(log + ".rc")) {
      result_of(c, log, std::atoi(ReadText(log + ".rc").c_str()));
      continue;
    }
    jobs[pending.size() % 2] += absl::StrCat(c.path, "\t", c.dir, "\t", log, "\n");
    pending.push_back(&c);
  }
  const std::string batch =
      (std::filesystem::path(neuron::testing::ToolDir()).parent_path() / "tests/kernels/oracle_batch.py")
          .string();
  auto worker = [&](int w) {
    const std::string list = absl::StrCat(tmp, "/oracle-jobs-", w);
    std::ofstream(list) << jobs[w];
    const std::string cmd = absl::StrCat("/usr/bin/python3 '", batch, "' '", oracle, "' ",
                                         kOracleTimeoutS, " <'", list, "' >'", list, ".log' 2>&1");
    if (std::system(cmd.c_str()) != 0) std::cerr << ReadText(list + ".log");
  };
  std::thread t1(worker, 0), t2(worker, 1);
  t1.join();
  t2.join();
  for (Candidate* c : pending) {
    const std::string log = c->dir + ".log";
    // No status: the batch died before this module (its log says why).
    const std::string rc = ReadText(log + ".rc");
    result_of(*c, log, rc.empty() ? 128 : std::atoi(rc.c_str()));
  }

  int matched = 0, mismatched = 0, oracle_unsupported = 0, oracle_failed = 0, oracle_timeout = 0,
      ours_unsupported = 0, known = 0;
  std::vector<std::string> report, unexpected, stale;
  // A module the oracle evaluated that does not match: a failure unless listed.
  auto not_matched = [&](const Candidate& c, const std::string& line) {
    const std::string reason =
        neuron::testing::KnownReason(neuron::testing::KnownOracleMismatches(), c.path);
    if (reason.empty()) {
      unexpected.push_back(line);
      report.push_back(line);
    } else {
      ++known;
      report.push_back(absl::StrCat(line, " [known: ", reason, "]"));
    }
  };
  for (Candidate& c : cands) {
    if (c.oracle_rc == 3) { ++oracle_unsupported; continue; }
    if (c.oracle_rc == 124) { ++oracle_timeout; report.push_back(absl::StrCat("  oracle-timeout ", c.name)); continue; }
    if (c.oracle_rc != 0) { ++oracle_failed; report.push_back(absl::StrCat("  oracle-error ", c.name, " rc=", c.oracle_rc)); continue; }
    auto m = hlo::LoadModuleFromFile(c.path);
    ASSERT_TRUE(m.ok());
    auto exe = Executable::Build(**m);
    if (!exe.ok()) {
      ++ours_unsupported;
      not_matched(c, absl::StrCat("  ours-unsupported ", c.name, ": ", std::string(exe.status().message())));
      continue;
    }
    std::vector<Tensor> inputs;
    std::string problem;
    const auto& specs = (*exe)->input_specs();
    for (size_t i = 0; i < specs.size() && problem.empty(); ++i) {
      auto a = tensorfile::ReadNpyArray(absl::StrCat(c.dir, "/in", i, ".npy"));
      if (!a.ok()) { problem = std::string(a.status().message()); break; }
      auto t = ToTensor(*a, specs[i]);
      if (!t.ok()) { problem = absl::StrCat("input ", i, ": ", std::string(t.status().message())); break; }
      inputs.push_back(std::move(*t));
    }
    std::vector<Tensor> outs;
    if (problem.empty()) {
      ExecOptions opts;
      opts.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      absl::Status s = (*exe)->Run(inputs, &outs, opts);
      if (!s.ok()) problem = absl::StrCat("run: ", std::string(s.message()));
    }
    if (problem.empty() && std::filesystem::exists(absl::StrCat(c.dir, "/out", outs.size(), ".npy")))
      problem = absl::StrCat("we produced ", outs.size(), " outputs, the reference more");
    for (size_t j = 0; j < outs.size() && problem.empty(); ++j) {
      auto ref = tensorfile::ReadNpyArray(absl::StrCat(c.dir, "/out", j, ".npy"));
      if (!ref.ok()) { problem = absl::StrCat("output ", j, ": ", std::string(ref.status().message())); break; }
      std::string diff = Compare(outs[j], *ref);
      if (!diff.empty()) problem = absl::StrCat("output ", j, " (", outs[j].ShapeString(), "): ", diff);
    }
    if (problem.empty()) {
      ++matched;
      if (!neuron::testing::KnownReason(neuron::testing::KnownOracleMismatches(), c.path).empty())
        stale.push_back(c.name);
    } else {
      ++mismatched;
      not_matched(c, absl::StrCat("  mismatch ", c.name, ": ", problem));
    }
  }
  int evaluable = matched + mismatched + ours_unsupported;
  std::cout << "ORACLE TALLY: candidates " << cands.size() << " (skipped: " << too_big
            << " over " << max_bytes / 1024 << " KiB, " << not_loadable << " not loadable, "
            << multi_device << " multi-device)\n"
            << "  modules run " << evaluable << " / matched " << matched << " / mismatched "
            << mismatched << " / ours-unsupported " << ours_unsupported << " (" << known
            << " of them known)\n"
            << "  not evaluated by the oracle: unsupported " << oracle_unsupported << " / error "
            << oracle_failed << " / over " << kOracleTimeoutS << " s " << oracle_timeout << "\n";
  for (const auto& r : report) std::cout << r << "\n";
  ASSERT_GT(evaluable, 0);
  EXPECT_TRUE(unexpected.empty()) << unexpected.size()
                                  << " oracle-evaluated modules do not match (listed above)";
  EXPECT_TRUE(stale.empty()) << "listed as known oracle mismatches but match: " << absl::StrJoin(stale, ", ");
  if (max_bytes == kMaxModuleBytes) {
    EXPECT_GE(matched + oracle_timeout + oracle_unsupported, kMinMatchedOrSetAsideByTheOracle);
  }
}

}  // namespace
}  // namespace neuron::kernels
