// The manifest of a compiled program (the NEFF member neff.json): what the
// program was compiled for and with, its input/output tensors, its
// constants, its memory plan and its LNC sharding plan. Keys are listed in
// man/neff.5 (MEMBERS); ToJson/FromJson are the only code that spells them.
//
// Stable contract with the runtime: every field below. New fields may be
// added; readers ignore keys they do not know.
#ifndef NEURON_LIB_PROGRAM_MANIFEST_H_
#define NEURON_LIB_PROGRAM_MANIFEST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/hlo/shape.h"

namespace neuron::program {

inline constexpr char kManifestMember[] = "neff.json";
inline constexpr char kProgramMember[] = "program.pb";
inline constexpr char kInputHloMember[] = "debug/hlo.txt";
inline constexpr char kSourceMapMember[] = "debug/source_map.json";
inline constexpr char kPassesMember[] = "compile/passes.json";
inline constexpr char kManifestFormat[] = "neuron-tools-neff";

// One input or output tensor. Inputs are the entry parameters in parameter
// order; a tuple-shaped parameter contributes one tensor per leaf, named
// "<param>.<i>.<j>" with the leaf's path in tuple_index. Outputs are the
// leaves of the entry's result, flattened depth-first: a single array
// result is named after the root instruction of the HLO as written, the
// leaves of a tuple result "output<i>".
struct TensorInfo {
  std::string name;
  int64_t index = 0;                  // position among inputs / outputs
  int64_t parameter = -1;             // inputs: the parameter number
  std::vector<int64_t> tuple_index;   // path inside a tuple (empty: whole)
  hlo::ElementType type = hlo::ElementType::kInvalid;
  std::vector<int64_t> dims;
  int64_t size = 0;                   // bytes
  // Outputs: the input whose buffer it may live in (input_output_alias:
  // a donated input), or -1.
  int64_t aliased_input = -1;
  bool must_alias = false;
  // Inputs: the parameter's pytree path as keys, from its metadata op_name
  // ("args[0]['params']['w']": args, 0, params, w), then the tuple index;
  // empty where the HLO records none.
  std::vector<std::string> path;
};

// A constant stored as its own member (an .npy file).
struct ConstantInfo {
  std::string name;    // the HLO constant instruction's name (no '%')
  std::string member;  // e.g. "constants/3.npy"
  hlo::ElementType type = hlo::ElementType::kInvalid;
  std::vector<int64_t> dims;
  int64_t size = 0;    // bytes of data (without the .npy header)
};

// Bytes the program needs on a core, from buffer assignment by liveness.
struct MemoryPlan {
  int64_t constants = 0;     // all constants (inline and member)
  int64_t inputs = 0;
  int64_t outputs = 0;
  int64_t scratch_peak = 0;  // most intermediate bytes live at one time
  // Output bytes that live in the buffers of the inputs they alias
  // (input_output_alias): counted in inputs, not again in total.
  int64_t aliased = 0;
  int64_t total = 0;         // constants + inputs + outputs - aliased + scratch_peak
};

// With lnc 2: an instruction of the entry computation whose work is split
// into `parts` pieces along `dimension` of its result, one per physical core.
struct ShardSplit {
  std::string instruction;
  int64_t dimension = 0;
  int64_t parts = 2;
};

struct Manifest {
  std::string format = kManifestFormat;
  std::string format_version = "2.1";
  std::string compiler_name = "neuron-compile";
  std::string compiler_version;
  std::string name;                 // module name
  std::string target = "trn1";      // trn1, trn1n, inf2, trn2
  int64_t lnc = 1;
  int64_t optlevel = 2;
  std::string model_type = "generic";
  std::string auto_cast = "none";
  std::string auto_cast_type = "bf16";
  bool mixed_precision_accumulation = true;
  bool saturate_infinity = false;
  std::string distribution_strategy;  // "" or "llm-training"
  bool fast_context_switch = false;
  bool fast_loading = false;
  std::vector<std::string> options;   // normalized options that shaped the program
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  bool collectives = false;           // the program talks across devices
  std::string program = kProgramMember;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::vector<ConstantInfo> constants;
  MemoryPlan memory;
  std::vector<ShardSplit> sharding;
};

std::string ManifestToJson(const Manifest& manifest);
// Errors name the key that is missing or of the wrong type.
absl::StatusOr<Manifest> ManifestFromJson(std::string_view json);

}  // namespace neuron::program

#endif  // NEURON_LIB_PROGRAM_MANIFEST_H_
