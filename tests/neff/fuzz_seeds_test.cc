// The NEFF fuzzer's committed seeds (tests/fuzz/seeds/neff_fuzzer/) stay
// valid NEFFs with their hashes, so fuzzing starts past the header checks;
// when the format changes this fails and they are compiled again (see
// tests/checks/fuzz.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "lib/neff/neff.h"
#include "tests/support/tool_runner.h"

namespace {

TEST(NeffFuzzSeeds, EveryOneReadsWithItsHash) {
  const std::filesystem::path dir =
      neuron::testing::SourceRoot() + "/tests/fuzz/seeds/neff_fuzzer";
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    neff::ReadOptions options;
    options.validate_hash = true;
    absl::StatusOr<neff::Package> package = neff::ReadFile(entry.path().string(), options);
    EXPECT_TRUE(package.ok()) << entry.path() << ": " << package.status();
    ++seeds;
  }
  EXPECT_GE(seeds, 8);
}

}  // namespace
