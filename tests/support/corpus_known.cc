#include "tests/support/corpus_known.h"

#include <filesystem>

namespace neuron::testing {

const std::vector<KnownModule>& KnownInvalidModules() {
  static const std::vector<KnownModule> kList = {
      {"xla__hlo_translate_hlo_to_mhlo_tests_import.hlo",
       "%convolution.4 in test_conv has window size 3x3 for a 2x2 kernel (an importer test "
       "that never verifies its convolution)"},
  };
  return kList;
}

const std::vector<KnownModule>& KnownOracleMismatches() {
  static const std::vector<KnownModule> kList = {};
  return kList;
}

std::string KnownReason(const std::vector<KnownModule>& list, const std::string& file_or_path) {
  const std::string name = std::filesystem::path(file_or_path).filename().string();
  for (const KnownModule& m : list) {
    if (name == m.file) return m.reason;
  }
  return "";
}

}  // namespace neuron::testing
