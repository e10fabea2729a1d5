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
  // Found 2026-12-05 by the oracle test: modules the oracle evaluates that
  // our executor refuses to build (no value mismatches were found).
  static const std::vector<KnownModule> kList = {
      {"xla__hlo_builder_tests_math_acos__part2.hlo",
       "our executor refuses the complex64 acos custom-call (unsupported complex element type)"},
      {"xla__hlo_builder_tests_math_acos__part3.hlo",
       "our executor refuses the complex128 acos custom-call (unsupported complex element type)"},
      {"xla__hlo_translate_hlo_to_mhlo_tests_import_dynamic_reshape__part1.hlo",
       "dynamic-reshape: the executor runs only what the compiler's dynamic-padder pass made static "
       "(tests/compiler/dynamic_shapes_test.cc checks its values); the oracle ignores runtime sizes"},
      {"xla__tests_dynamic_reshape_test__DoubleDynamicDimensions.hlo",
       "set-dimension-size: the executor runs only what the compiler's dynamic-padder pass made static "
       "(tests/compiler/dynamic_shapes_test.cc checks its values); the oracle ignores runtime sizes"},
      {"xla__tests_dynamic_reshape_test__OutputDoubleDynamicDimensions.hlo",
       "set-dimension-size: the executor runs only what the compiler's dynamic-padder pass made static "
       "(tests/compiler/dynamic_shapes_test.cc checks its values); the oracle ignores runtime sizes"},
  };
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
