#include "lib/compiler/error_codes.h"

#include "absl/strings/str_cat.h"

namespace neuron::compiler {
namespace {

constexpr ErrorCode kCodes[] = {
    {kErrInputUnreadable, "input file cannot be read",
     "The FILE argument names a file that does not exist, is not readable, or is a directory.",
     "Check the path; pass `-` to read the module from standard input."},
    {kErrInputInvalid, "input is not a valid HLO module",
     "The input is neither HLO text (starting with `HloModule`) nor a binary HloModuleProto, "
     "HloProto or HloModuleProtoWithConfig, or it is truncated or corrupt. The message gives "
     "the line and column (text) or what is wrong (binary).",
     "Regenerate the dump (XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto, or "
     "`jax.jit(f).lower(...).as_text()`); make sure the file was copied completely."},
    {kErrVerifyFailed, "module fails verification",
     "An instruction's shape does not match what its operands and attributes imply, or the "
     "module's structure is inconsistent (a missing root, a call to an unknown computation).",
     "The message names the instruction; fix the producer of the module. Dumps edited by hand "
     "are the usual cause."},
    {kErrElidedConstant, "constant values were elided",
     "The printer that wrote the module left out large constants as `{...}`, so the values "
     "the program needs are not in the file.",
     "Dump the module with constants (XLA: --xla_dump_large_constants), or pass "
     "`--fill-elided-constants zeros|random` to compile it anyway for performance work."},
    {kErrFillTooLarge, "elided constants too large to fill",
     "`--fill-elided-constants` gives elided constants values in the compiler's memory; these "
     "would take more than any address space holds, or more than this host can give the "
     "compiler (the message names the limit).",
     "Compile on a host with the memory the message names, or dump the module with its "
     "constants (XLA: --xla_dump_large_constants) instead of filling them."},
    {kErrBadOption, "invalid option or value",
     "An option is unknown, lacks its value, or has a value outside its allowed set. Options "
     "come from the command line and from NEURON_CC_FLAGS.",
     "Run `neuron-compile compile --help` for the options and their values; check "
     "NEURON_CC_FLAGS too."},
    {kErrOptionConflict, "options conflict with the target",
     "An option does not apply to the chosen --target, e.g. --logical-nc-config/-lnc on a "
     "target other than trn2 (the real compiler's NCC_EARG001).",
     "Drop the option or choose a target that supports it."},
    {kErrUnsupportedOperator, "unsupported operator",
     "The module uses an HLO operator the compiler cannot lower to the device (the message "
     "names it, its instruction and its source location).",
     "Run `neuron-compile list-operators --framework XLA` for what is supported; rewrite the "
     "model to avoid the operator, or run that part on the host."},
    {kErrUnsupportedCustomCall, "unsupported custom-call target",
     "A custom-call names a target the compiler does not know how to lower, or a configuration of one it "
     "does not model. Known GEMM and convolution targets, SPMD annotations, XLA's TopK and Neuron's own "
     "activations, RMSNorm, softmax, argmax/argmin, top-k, nearest resize and markers are lowered, and so is "
     "TransformerEngine's fused attention (te_fused_attn_forward_ffi/backward_ffi) except dropout while "
     "training (the device's random stream is not modelled), ALiBi, FP8 and "
     "ragged (THD), mixed or paged QKV layouts; other vendor kernels (e.g. cuDNN's fused attention) are "
     "not, nor Neuron targets that cannot run on the simulated core (AwsNeuronCustomNativeKernel/CustomOp "
     "payloads, dropout, RmsNormBackward): the message says why.",
     "Export the model without the vendor kernel (e.g. disable cuDNN/TE fusions, or dump the "
     "module before backend-specific passes)."},
    {kErrDynamicShape, "dynamic shape not supported here",
     "Bounded dynamic dimensions (`<=N`) compile: arrays are kept at their bound with the runtime size "
     "beside them (set-dimension-size, get-dimension-size, dynamic-reshape; elementwise ops, broadcast, "
     "transpose, reshapes that keep the dimension whole, reduce and dot carry or mask the size, and so "
     "do slice, concatenate and reverse where they leave the dynamic dimension alone). "
     "Refused, by name: any other operator reading a dynamic dimension (gather, sort, pad, convolution, "
     "while...: it would read the padding past the runtime size), a slice of a dynamic dimension not "
     "starting at 0 with stride 1, concatenate along or reverse of a dynamic dimension, a reshape that "
     "splits or merges a dynamic dimension, a tuple of dynamic arrays other than the entry result, a variadic "
     "reduce keeping a dynamic dimension, an entry parameter with a dynamic dimension (the runtime "
     "passes fixed-shape arrays and no size), dynamic shapes inside called computations, and bounds past "
     "2^31-1 (sizes are s32) or unbounded "
     "`?` dimensions (no bound to allocate). The real compiler's NCC_EMOD025.",
     "Set sizes inside the entry computation with set-dimension-size, use dynamic-reshape where the "
     "valid elements must move, or pad inputs to a static size (bucketing) and export a static-shaped "
     "module."},
    {kErrComplexType, "complex types are not supported",
     "An instruction produces or consumes c64/c128 values in an operator the executor computes "
     "only in real arithmetic: batch-norm, reduce-window, top-k, rng, ragged-dot and custom-calls "
     "(the real compiler's NCC_EVRF004). Elementwise ops, dot, convolution, fft, cholesky "
     "(Hermitian, A = L L^H) and triangular-solve (ADJOINT conjugates) run on complex values.",
     "Split complex arithmetic into real and imaginary parts in the model."},
    {kErrBadCustomCall, "malformed custom-call",
     "A custom-call the compiler would lower has operands, a result shape or a backend_config "
     "it cannot interpret (e.g. a GEMM without dot dimension numbers).",
     "Check the producer of the module; the message says what was expected."},
    {kErrUnsupportedKernel, "unsupported operand types or shapes",
     "The operator is supported, but not with these operand types, shapes or attributes (e.g. "
     "a dot, cholesky or triangular-solve mixing complex and real operands, a triangular-solve "
     "whose shapes do not fit its options, a scaled-dot with per-tensor global scales (six "
     "operands: only the four-operand form is lowered to dot), a ragged-all-to-all whose offset "
     "arrays are not rank 1); the executor's kernels would refuse the NEFF at load.",
     "The message names the instruction and the reason; convert the operands or fix the "
     "producer of the module."},
    {kErrOutputUnwritable, "output cannot be written",
     "The NEFF could not be written to --output (missing directory, no permission, full disk).",
     "Choose another --output path or free space."},
    {kErrCachedFailure, "compile failed earlier (cached failure)",
     "The compile cache holds a failed result for the same module, options and compiler "
     "version, so the compile is skipped.",
     "Fix the cause shown in the cached log, or pass --retry-failed-compilation to compile "
     "again (or --no-cache)."},
    {kErrInternal, "internal compiler error",
     "A compiler pass failed in a way that is a bug in neuron-compile. The message names the "
     "instruction when known and the reproducer file the input was saved to.",
     "Report it with the reproducer (neuron-compile-repro-PID.hlo) and the log file; as a "
     "workaround try another --optlevel."},
};

}  // namespace

std::span<const ErrorCode> AllErrorCodes() { return kCodes; }

const ErrorCode* FindErrorCode(std::string_view code) {
  for (const ErrorCode& e : kCodes) {
    if (code == e.code) return &e;
  }
  return nullptr;
}

std::string RenderErrorCodesMarkdown() {
  std::string out =
      "# neuron-compile error codes\n\n"
      "<!-- Generated from lib/compiler/error_codes.cc; a test checks they agree. -->\n\n"
      "Every compiler error starts with a stable code. The message also names the HLO\n"
      "instruction, its computation and, when the module carries metadata, the source\n"
      "location (`source_file:source_line`) and `op_name`:\n\n"
      "```\n"
      "neuron-compile: error: NCC-E0201: unsupported operator 'fft' at %fft.3 in computation "
      "'main' (model.py:42, op_name \"jit(f)/fft\"): <fix>\n"
      "```\n\n"
      "| Code | Title |\n|---|---|\n";
  for (const ErrorCode& e : kCodes) absl::StrAppend(&out, "| ", e.code, " | ", e.title, " |\n");
  for (const ErrorCode& e : kCodes) {
    absl::StrAppend(&out, "\n## ", e.code, ": ", e.title, "\n\n**Cause.** ", e.cause,
                    "\n\n**Fix.** ", e.fix, "\n");
  }
  return out;
}

}  // namespace neuron::compiler
