#include "lib/kernels/support.h"

#include <algorithm>
#include <initializer_list>

#include "lib/hlo/shape_inference.h"

namespace neuron::kernels {
namespace {

using hlo::Opcode;

// Complex anywhere among the types, and not all of them the same type.
bool MixesComplex(std::initializer_list<hlo::ElementType> types) {
  bool any = false, same = true;
  for (hlo::ElementType t : types) {
    any |= hlo::IsComplex(t);
    same &= t == *types.begin();
  }
  return any && !same;
}

absl::Status Refuse(const char* why) { return absl::UnimplementedError(why); }

// hlo::InferShape accepts the operands and attributes, and gives the
// declared result's type-free dims.
bool FitsShapeRule(const hlo::Instruction& instr) {
  absl::StatusOr<std::optional<hlo::Shape>> inferred = hlo::InferShape(instr);
  return inferred.ok() && inferred->has_value() && instr.shape().IsArray() && (*inferred)->dims == instr.shape().dims;
}

}  // namespace

absl::Status KernelRefusal(const hlo::Instruction& instr) {
  const hlo::Shape& out = instr.shape();
  switch (instr.opcode()) {
    case Opcode::kDot:
      // The GEMMs hold one domain; complex is all or nothing.
      if (instr.operand_count() == 2 &&
          MixesComplex({instr.operand(0)->shape().type, instr.operand(1)->shape().type, out.type}))
        return Refuse("dot mixing complex and real operands");
      return absl::OkStatus();
    case Opcode::kConvolution:
      if (instr.operand_count() == 2 &&
          MixesComplex({instr.operand(0)->shape().type, instr.operand(1)->shape().type, out.type}))
        return Refuse("convolution mixing complex and other element types");
      return absl::OkStatus();
    case Opcode::kCholesky: {
      const hlo::Shape& a = instr.operand(0)->shape();
      if (a.rank() < 2) return Refuse("cholesky of rank < 2");
      // The loops index square matrices and write the operand's shape.
      if (a.dims[a.rank() - 2] != a.dims.back() || out.dims != a.dims)
        return Refuse("cholesky of a non-square matrix or another result shape");
      if (MixesComplex({a.type, out.type})) return Refuse("cholesky mixing complex and real types");
      return absl::OkStatus();
    }
    case Opcode::kTriangularSolve: {
      const hlo::Shape& a = instr.operand(0)->shape();
      const hlo::Shape& b = instr.operand(1)->shape();
      if (a.rank() < 2 || b.rank() < 2) return Refuse("triangular-solve of rank < 2");
      // a square n x n, b with n rows (left side) or n columns (right
      // side), the same batch; the result has b's shape.
      const int64_t n = a.dims.back();
      const int64_t b_n = instr.attrs().left_side ? b.dims[b.rank() - 2] : b.dims.back();
      if (a.dims[a.rank() - 2] != n || b_n != n || a.rank() != b.rank() || out.dims != b.dims ||
          !std::equal(a.dims.begin(), a.dims.end() - 2, b.dims.begin()))
        return Refuse("triangular-solve shapes that do not match its options");
      // One domain for the solve: complex is all or nothing.
      if (MixesComplex({a.type, b.type, out.type}))
        return Refuse("triangular-solve mixing complex and real types");
      return absl::OkStatus();
    }
    case Opcode::kRaggedDot:
    case Opcode::kRaggedAllToAll: {
      // The kernels index by the shapes the verifier's rule accepts; a
      // NEFF's program is not verified again when it loads.
      if (!FitsShapeRule(instr)) return Refuse("ragged operator whose shapes do not fit its dimension numbers");
      // One offset per peer (XLA's later form with several updates per
      // peer is not run).
      if (instr.opcode() == Opcode::kRaggedAllToAll)
        for (size_t i = 2; i < 6; ++i)
          if (instr.operand(i)->shape().rank() != 1) return Refuse("ragged-all-to-all with offset arrays of rank other than 1");
      return absl::OkStatus();
    }
    case Opcode::kScaledDot:
      // The compiler lowers the four-operand form to dot (passes/
      // scaled_dot_lowering.cc); what reaches the executor is the rest.
      if (instr.operand_count() == 4) return Refuse("scaled-dot before the compiler lowers it to dot");
      return Refuse("scaled-dot with per-tensor global scales (six operands)");
    case Opcode::kFft: {
      const std::string& type = instr.attrs().fft_type.empty() ? "FFT" : instr.attrs().fft_type;
      const auto& len = instr.attrs().fft_length;
      if (len.empty() || len.size() > static_cast<size_t>(instr.operand(0)->shape().rank()) ||
          (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT"))
        return Refuse("fft type or length");
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

bool RunsWithComplexTypes(hlo::Opcode op) {
  using hlo::Opcode;
  switch (op) {
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
    case Opcode::kRaggedDot:  // evaluated in double
    case Opcode::kTopK:
    case Opcode::kRng:
    case Opcode::kReduceWindow:
    case Opcode::kCustomCall:
      return false;
    default:
      return true;
  }
}

bool RunsCustomCall(std::string_view target) {
  return target == "GetRngSeed" || target == kDevicePrintTarget;
}

}  // namespace neuron::kernels
