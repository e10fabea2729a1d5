// Reads the reference itself and checks the table holds exactly its
// variables, in its order: a row starting with a backticked NEURON_* name
// is a variable; <submodule> rows expand over the listed submodules.
#include <fstream>
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lib/config/config.h"
#include "tests/support/tool_runner.h"

namespace neuron::config {
namespace {

// `NAME` at the start of a line, followed by a tab: a table row. (No
// std::regex: GCC 12 warns inside it under the sanitizers.)
std::string RowName(const std::string& line) {
  if (line.rfind("`NEURON_", 0) != 0) return "";
  size_t close = line.find('`', 1);
  if (close == std::string::npos || close + 1 >= line.size() || line[close + 1] != '\t') {
    return "";
  }
  return line.substr(1, close - 1);
}

// The all-capital backticked words of a text, e.g. `ENC`, `HAL`.
std::vector<std::string> BacktickedWords(const std::string& text) {
  std::vector<std::string> words;
  size_t open = text.find('`');
  while (open != std::string::npos) {
    size_t close = text.find('`', open + 1);
    if (close == std::string::npos) break;
    std::string word = text.substr(open + 1, close - open - 1);
    if (!word.empty() &&
        std::all_of(word.begin(), word.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
      words.push_back(word);
    }
    open = text.find('`', close + 1);
  }
  return words;
}

std::vector<std::string> SeedVariables(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> names;
  std::vector<std::string> submodules;
  const std::string kPlaceholder = "<submodule>";
  std::string line;
  while (std::getline(in, line)) {
    std::string name = RowName(line);
    if (name.empty()) continue;
    if (name.size() < kPlaceholder.size() ||
        name.compare(name.size() - kPlaceholder.size(), kPlaceholder.size(),
                     kPlaceholder) != 0) {
      names.push_back(name);
      continue;
    }
    // "Valid submodules: `ENC`, ..." names them; a later row says "Same
    // submodule list as above".
    size_t list = line.find("Valid submodules:");
    if (list != std::string::npos) {
      // The list ends with its sentence; later backticks are levels.
      size_t end_of_list = line.find('.', list);
      submodules = BacktickedWords(line.substr(
          list, end_of_list == std::string::npos ? std::string::npos : end_of_list - list));
    }
    std::string prefix = name.substr(0, name.size() - kPlaceholder.size());
    for (const std::string& sub : submodules) names.push_back(prefix + sub);
  }
  return names;
}

TEST(SeedCoverage, TableMatchesTheReference) {
  NEURON_REQUIRE_SHARED();
  std::vector<std::string> seed =
      SeedVariables(neuron::testing::SharedDir() + "/seeds/neuron-runtime-env-vars.txt");
  ASSERT_GT(seed.size(), 50u) << "the reference did not parse";
  std::vector<std::string> table;
  for (const VariableSpec& spec : AllVariables()) {
    if (spec.section != "Simulator") table.push_back(spec.name);
  }
  for (const std::string& name : seed) {
    EXPECT_NE(FindVariable(name), nullptr) << name << " is in the reference, not the table";
  }
  for (const std::string& name : table) {
    EXPECT_NE(std::find(seed.begin(), seed.end(), name), seed.end())
        << name << " is in the table, not the reference";
  }
  EXPECT_EQ(table, seed) << "the table is not in the reference's order";
}

TEST(SeedCoverage, SubmoduleListMatchesTheReference) {
  NEURON_REQUIRE_SHARED();
  std::vector<std::string> seed =
      SeedVariables(neuron::testing::SharedDir() + "/seeds/neuron-runtime-env-vars.txt");
  std::vector<std::string> from_seed;
  for (const std::string& name : seed) {
    if (name.rfind("NEURON_RT_LOG_LEVEL_", 0) == 0) {
      from_seed.push_back(name.substr(std::string("NEURON_RT_LOG_LEVEL_").size()));
    }
  }
  std::vector<std::string> ours(std::begin(kLogSubmodules), std::end(kLogSubmodules));
  EXPECT_EQ(from_seed, ours);
}

}  // namespace
}  // namespace neuron::config
