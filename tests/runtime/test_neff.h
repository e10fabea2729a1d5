// Builds NEFFs in-process for the runtime tests, from HLO text, through
// the same lib/program + lib/neff code the compiler uses, so the tests do
// not depend on neuron-compile. Options make the broken variants the tests
// need: another target, another LNC, a legacy format version.
#ifndef NEURON_TESTS_RUNTIME_TEST_NEFF_H_
#define NEURON_TESTS_RUNTIME_TEST_NEFF_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace neuron::testing {

struct TestNeffOptions {
  std::string target = "trn1";
  uint32_t lnc = 1;
  bool fast_loading = false;
  // Tar bytes per zstd frame of a compressed NEFF; 0: one frame.
  uint64_t zstd_frame_bytes = 8ull << 20;
  // Patch the header's format version (0 = leave the writer's).
  uint64_t version_major = 0;
};

// The NEFF bytes of an HLO text module (entry parameters become the inputs,
// the root's leaves the outputs).
absl::StatusOr<std::string> BuildTestNeff(const std::string& hlo_text,
                                          const TestNeffOptions& options = {});

// Writes bytes to a file in `dir`; returns the path.
std::string WriteTestFile(const std::string& dir, const std::string& name,
                          const std::string& bytes);

// Small modules used by several tests.
inline constexpr const char* kAddHlo = R"(HloModule add
ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT sum = f32[2,3] add(x, y)
}
)";

// An endless loop: the condition is always true.
inline constexpr const char* kEndlessHlo = R"(HloModule endless
cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(p, one)
}
ENTRY main {
  x = s32[] parameter(0)
  ROOT w = s32[] while(x), condition=cond, body=body
}
)";

// log(x) / x: NaN for negative x, -inf at 0; the divide propagates them.
inline constexpr const char* kLogHlo = R"(HloModule logs
ENTRY main {
  x = f32[4] parameter(0)
  l = f32[4] log(x)
  ROOT r = f32[4] multiply(l, x)
}
)";

// f32 -> bf16 conversion (stochastic rounding applies).
inline constexpr const char* kConvertHlo = R"(HloModule conv
ENTRY main {
  x = f32[4096] parameter(0)
  ROOT c = bf16[4096] convert(x)
}
)";

}  // namespace neuron::testing

#endif  // NEURON_TESTS_RUNTIME_TEST_NEFF_H_
