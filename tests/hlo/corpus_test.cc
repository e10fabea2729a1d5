// Every module in ../shared/hlo: load, verify, print, re-load, compare. A
// verifier rejection fails unless the module is listed as known-invalid in
// tests/support/corpus_known.cc (and a listed module that verifies fails too).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "gtest/gtest.h"
#include "lib/hlo/load.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/verifier.h"
#include "tests/support/corpus_known.h"
#include "tests/support/tool_runner.h"

namespace neuron::hlo {
namespace {

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  std::string dir = neuron::testing::SharedDir() + "/hlo";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(".hlo") || name.ends_with(".pb")) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compares two modules structurally: computations, opcodes, shapes.
std::string Differences(const Module& a, const Module& b) {
  if (a.computation_count() != b.computation_count()) return "computation count differs";
  if (a.instruction_count() != b.instruction_count()) return "instruction count differs";
  for (Computation* ca : a.computations()) {
    Computation* cb = b.Find(ca->name());
    if (!cb) return "computation '" + ca->name() + "' missing after round trip";
    if ((ca == a.entry()) != (cb == b.entry())) return "entry differs";
    for (Instruction* ia : ca->instructions()) {
      Instruction* ib = cb->Find(ia->name());
      if (!ib) return "instruction '" + ia->name() + "' missing";
      if (ia->opcode_text() != ib->opcode_text()) return "opcode of '" + ia->name() + "' differs";
      if (!(ia->shape() == ib->shape())) {
        return "shape of '" + ia->name() + "' differs: " + ia->shape().ToString() + " vs " +
               ib->shape().ToString();
      }
      if (ia->operand_count() != ib->operand_count()) return "operands of '" + ia->name() + "' differ";
      for (size_t i = 0; i < ia->operand_count(); ++i) {
        if (ia->operand(i)->name() != ib->operand(i)->name()) return "operand of '" + ia->name() + "' differs";
      }
      if (ia->called_computations().size() != ib->called_computations().size()) {
        return "callees of '" + ia->name() + "' differ";
      }
      if ((ca->root() == ia) != (cb->root() == ib)) return "root differs in " + ca->name();
      const auto& la = ia->attrs().literal;
      const auto& lb = ib->attrs().literal;
      if (la.has_value() != lb.has_value()) return "literal presence differs for " + ia->name();
      if (la && la->ToString() != lb->ToString()) return "literal of '" + ia->name() + "' differs";
    }
  }
  return "";
}

TEST(CorpusTest, EveryModuleLoadsVerifiesAndRoundTrips) {
  NEURON_REQUIRE_SHARED();
  std::vector<std::string> files = CorpusFiles();
  ASSERT_GT(files.size(), 200u);
  int loaded = 0, verified = 0, round_tripped = 0, known_invalid = 0;
  std::map<std::string, std::string> failures;
  for (const std::string& path : files) {
    std::string bytes = ReadFile(path);
    auto module = LoadModule(bytes, path);
    if (!module.ok()) {
      std::string msg(module.status().message());
      // Failures must be one clear line naming the file.
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      failures[path] = "load: " + msg;
      continue;
    }
    ++loaded;
    absl::Status v = Verify(**module);
    const std::string known = neuron::testing::KnownReason(neuron::testing::KnownInvalidModules(), path);
    if (v.ok()) {
      ++verified;
      EXPECT_EQ(known, "") << path << " is listed as known-invalid but verifies";
    } else if (!known.empty()) {
      ++known_invalid;
      failures[path] = "verify (known invalid: " + known + "): " + std::string(v.message());
    } else {
      failures[path] = "verify: " + std::string(v.message());
      ADD_FAILURE() << path << ": the verifier rejects a module not listed as known-invalid: "
                    << v.message();
    }
    std::string printed = PrintModule(**module);
    auto again = LoadModule(printed, path + " (printed)");
    if (!again.ok()) {
      ADD_FAILURE() << path << ": printed text does not re-parse: " << again.status().message();
      continue;
    }
    std::string diff = Differences(**module, **again);
    EXPECT_EQ(diff, "") << path;
    if (diff.empty()) ++round_tripped;
  }
  std::cout << "HLO corpus: " << files.size() << " files, " << loaded << " loaded, " << verified
            << " verified (" << known_invalid << " known invalid), " << round_tripped << " round-tripped, " << failures.size()
            << " failed\n";
  for (const auto& [path, why] : failures) {
    std::cout << "  " << std::filesystem::path(path).filename().string() << ": " << why << "\n";
  }
  // Measured 2026-12-05: all 243 load, 242 verify (1 known invalid).
  EXPECT_EQ(loaded, static_cast<int>(files.size()));
  EXPECT_EQ(verified + known_invalid, loaded);
  EXPECT_EQ(loaded, round_tripped);
}

}  // namespace
}  // namespace neuron::hlo
