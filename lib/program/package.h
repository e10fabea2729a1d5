// The program package: what the compiler puts inside a NEFF and the runtime
// takes out of it. Serialize turns an optimized module plus its manifest into
// NEFF members; Deserialize reads them back.
//
// Members (also listed in man/neff.5, MEMBERS):
//   neff.json              the Manifest (lib/program/manifest.h)
//   program.pb             the optimized module, binary HloModuleProtoWithConfig
//                          (XLA field numbers). Constants over
//                          kInlineConstantLimit bytes have no values there:
//                          their literal holds the shape only and the
//                          frontend attribute neuron_constant_member names
//                          the member with the values.
//   constants/<n>.npy      one per large constant, row-major, .npy 1.0; types
//                          NumPy lacks (bf16, fp8) as same-width unsigned ints
//   debug/hlo.txt          the input module as HLO text
//   debug/source_map.json  {"<instruction>": {"computation", "op_name",
//                          "source_file", "source_line"}} for the program's
//                          instructions that carry metadata
//   compile/passes.json    per-pass times and instruction counts
//
// Stable for the runtime: Package, ConstantRef, Deserialize, the member
// names above and the Manifest fields.
#ifndef NEURON_LIB_PROGRAM_PACKAGE_H_
#define NEURON_LIB_PROGRAM_PACKAGE_H_

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/module.h"
#include "lib/neff/neff.h"
#include "lib/program/manifest.h"

namespace neuron::program {

// Constants larger than this many bytes go to their own .npy member.
inline constexpr int64_t kInlineConstantLimit = 1024;

// The bytes of one member-held constant, viewed in place in the NEFF
// (zero-copy: valid while the neff::Package it came from lives).
struct ConstantRef {
  std::string instruction;  // constant instruction name (no '%')
  std::string member;       // e.g. "constants/3.npy"
  hlo::Shape shape;
  std::string_view bytes;   // row-major data, StorageBytes per element
};

struct Package {
  // The program. Member-held constants have elided literals
  // (Literal::elided()); their values are in `constants`.
  std::unique_ptr<hlo::Module> module;
  Manifest manifest;
  std::vector<ConstantRef> constants;
};

struct SerializeInput {
  const hlo::Module* module = nullptr;  // the optimized program
  Manifest manifest;                    // constants[] is filled by Serialize
  std::string input_hlo_text;           // debug/hlo.txt
  std::string passes_json;              // compile/passes.json ("" = none)
  // Page-align constant data inside members (fast-loading NEFFs).
  bool page_align_constants = false;
};

// Builds the members. Their bytes are owned by `storage`, which must
// outlive the returned members (neff::Member holds views).
absl::StatusOr<std::vector<neff::Member>> Serialize(const SerializeInput& input,
                                                    std::deque<std::string>* storage);

// Reads the members of a NEFF back. Errors name the member and what is
// wrong. The returned ConstantRefs view `neff`'s data: keep it alive.
absl::StatusOr<Package> Deserialize(const neff::Package& neff);

// The manifest alone (for tools that only list tensors).
absl::StatusOr<Manifest> ReadManifest(const neff::Package& neff);

}  // namespace neuron::program

#endif  // NEURON_LIB_PROGRAM_PACKAGE_H_
