// HLO opcodes: one X-macro list of (enum name, text name, kind). Opcodes we
// do not know parse as kUnknown and keep their text, so the compiler can say
// "unsupported operator 'foo'" instead of failing to read the module.
#ifndef NEURON_LIB_HLO_OPCODE_H_
#define NEURON_LIB_HLO_OPCODE_H_

#include <cstdint>
#include <string_view>

namespace neuron::hlo {

// Kinds drive shape inference: elementwise ops share one rule per kind.
enum class OpKind : uint8_t {
  kUnary,       // elementwise, result has the operand's shape
  kUnaryPred,   // elementwise, result is pred (is-finite)
  kBinary,      // elementwise, two operands of one shape
  kLogical,     // and/or/xor/not/shifts: integer or pred
  kOther,
};

#define NEURON_HLO_OPCODES(V)                                     \
  V(kAbs, "abs", kUnary)                                          \
  V(kAdd, "add", kBinary)                                         \
  V(kAddDependency, "add-dependency", kOther)                     \
  V(kAfterAll, "after-all", kOther)                               \
  V(kAllGather, "all-gather", kOther)                             \
  V(kAllGatherDone, "all-gather-done", kOther)                    \
  V(kAllGatherStart, "all-gather-start", kOther)                  \
  V(kAllReduce, "all-reduce", kOther)                             \
  V(kAllReduceDone, "all-reduce-done", kOther)                    \
  V(kAllReduceStart, "all-reduce-start", kOther)                  \
  V(kAllToAll, "all-to-all", kOther)                              \
  V(kAnd, "and", kLogical)                                        \
  V(kAsyncDone, "async-done", kOther)                             \
  V(kAsyncStart, "async-start", kOther)                           \
  V(kAsyncUpdate, "async-update", kOther)                         \
  V(kAtan2, "atan2", kBinary)                                     \
  V(kBatchNormGrad, "batch-norm-grad", kOther)                    \
  V(kBatchNormInference, "batch-norm-inference", kOther)          \
  V(kBatchNormTraining, "batch-norm-training", kOther)            \
  V(kBitcast, "bitcast", kOther)                                  \
  V(kBitcastConvert, "bitcast-convert", kOther)                   \
  V(kBroadcast, "broadcast", kOther)                              \
  V(kCall, "call", kOther)                                        \
  V(kCbrt, "cbrt", kUnary)                                        \
  V(kCeil, "ceil", kUnary)                                        \
  V(kCholesky, "cholesky", kOther)                                \
  V(kClamp, "clamp", kOther)                                      \
  V(kClz, "count-leading-zeros", kUnary)                          \
  V(kCollectiveBroadcast, "collective-broadcast", kOther)         \
  V(kCollectivePermute, "collective-permute", kOther)             \
  V(kCollectivePermuteDone, "collective-permute-done", kOther)    \
  V(kCollectivePermuteStart, "collective-permute-start", kOther)  \
  V(kCompare, "compare", kOther)                                  \
  V(kComplex, "complex", kOther)                                  \
  V(kConcatenate, "concatenate", kOther)                          \
  V(kConditional, "conditional", kOther)                          \
  V(kConstant, "constant", kOther)                                \
  V(kConvert, "convert", kOther)                                  \
  V(kConvolution, "convolution", kOther)                          \
  V(kCopy, "copy", kUnary)                                        \
  V(kCopyDone, "copy-done", kOther)                               \
  V(kCopyStart, "copy-start", kOther)                             \
  V(kCos, "cosine", kUnary)                                       \
  V(kCustomCall, "custom-call", kOther)                           \
  V(kDivide, "divide", kBinary)                                   \
  V(kDomain, "domain", kOther)                                    \
  V(kDot, "dot", kOther)                                          \
  V(kDynamicReshape, "dynamic-reshape", kOther)                   \
  V(kDynamicSlice, "dynamic-slice", kOther)                       \
  V(kDynamicUpdateSlice, "dynamic-update-slice", kOther)          \
  V(kErf, "erf", kUnary)                                          \
  V(kExp, "exponential", kUnary)                                  \
  V(kExpm1, "exponential-minus-one", kUnary)                      \
  V(kFft, "fft", kOther)                                          \
  V(kFloor, "floor", kUnary)                                      \
  V(kFusion, "fusion", kOther)                                    \
  V(kGather, "gather", kOther)                                    \
  V(kGetDimensionSize, "get-dimension-size", kOther)              \
  V(kGetTupleElement, "get-tuple-element", kOther)                \
  V(kImag, "imag", kOther)                                        \
  V(kInfeed, "infeed", kOther)                                    \
  V(kIota, "iota", kOther)                                        \
  V(kIsFinite, "is-finite", kUnaryPred)                           \
  V(kLog, "log", kUnary)                                          \
  V(kLog1p, "log-plus-one", kUnary)                               \
  V(kLogistic, "logistic", kUnary)                                \
  V(kMap, "map", kOther)                                          \
  V(kMaximum, "maximum", kBinary)                                 \
  V(kMinimum, "minimum", kBinary)                                 \
  V(kMultiply, "multiply", kBinary)                               \
  V(kNegate, "negate", kUnary)                                    \
  V(kNot, "not", kLogical)                                        \
  V(kOptimizationBarrier, "opt-barrier", kOther)                  \
  V(kOr, "or", kLogical)                                          \
  V(kOutfeed, "outfeed", kOther)                                  \
  V(kPad, "pad", kOther)                                          \
  V(kParameter, "parameter", kOther)                              \
  V(kPartitionId, "partition-id", kOther)                         \
  V(kPopulationCount, "popcnt", kUnary)                           \
  V(kPower, "power", kBinary)                                     \
  V(kRaggedAllToAll, "ragged-all-to-all", kOther)                 \
  V(kRaggedDot, "ragged-dot", kOther)                             \
  V(kReal, "real", kOther)                                        \
  V(kRecv, "recv", kOther)                                        \
  V(kRecvDone, "recv-done", kOther)                               \
  V(kReduce, "reduce", kOther)                                    \
  V(kReducePrecision, "reduce-precision", kUnary)                 \
  V(kReduceScatter, "reduce-scatter", kOther)                     \
  V(kReduceWindow, "reduce-window", kOther)                       \
  V(kRemainder, "remainder", kBinary)                             \
  V(kReplicaId, "replica-id", kOther)                             \
  V(kReshape, "reshape", kOther)                                  \
  V(kReverse, "reverse", kOther)                                  \
  V(kRng, "rng", kOther)                                          \
  V(kRngBitGenerator, "rng-bit-generator", kOther)                \
  V(kRngGetAndUpdateState, "rng-get-and-update-state", kOther)    \
  V(kRoundNearestAfz, "round-nearest-afz", kUnary)                \
  V(kRoundNearestEven, "round-nearest-even", kUnary)              \
  V(kRsqrt, "rsqrt", kUnary)                                      \
  V(kScan, "scan", kOther)                                        \
  V(kScaledDot, "scaled-dot", kOther)                             \
  V(kScatter, "scatter", kOther)                                  \
  V(kSelect, "select", kOther)                                    \
  V(kSelectAndScatter, "select-and-scatter", kOther)              \
  V(kSend, "send", kOther)                                        \
  V(kSendDone, "send-done", kOther)                               \
  V(kSetDimensionSize, "set-dimension-size", kOther)              \
  V(kShiftLeft, "shift-left", kLogical)                           \
  V(kShiftRightArithmetic, "shift-right-arithmetic", kLogical)    \
  V(kShiftRightLogical, "shift-right-logical", kLogical)          \
  V(kSign, "sign", kUnary)                                        \
  V(kSin, "sine", kUnary)                                         \
  V(kSlice, "slice", kOther)                                      \
  V(kSort, "sort", kOther)                                        \
  V(kSqrt, "sqrt", kUnary)                                        \
  V(kStochasticConvert, "stochastic-convert", kOther)             \
  V(kSubtract, "subtract", kBinary)                               \
  V(kTan, "tan", kUnary)                                          \
  V(kTanh, "tanh", kUnary)                                        \
  V(kTopK, "topk", kOther)                                        \
  V(kTranspose, "transpose", kOther)                              \
  V(kTriangularSolve, "triangular-solve", kOther)                 \
  V(kTuple, "tuple", kOther)                                      \
  V(kWhile, "while", kOther)                                      \
  V(kXor, "xor", kLogical)

enum class Opcode : uint16_t {
#define NEURON_HLO_OPCODE_ENUM(e, text, kind) e,
  NEURON_HLO_OPCODES(NEURON_HLO_OPCODE_ENUM)
#undef NEURON_HLO_OPCODE_ENUM
  kUnknown,  // an opcode this front end does not know; text is kept
};

// "add" for kAdd; "unknown" for kUnknown.
std::string_view OpcodeName(Opcode op);
// kUnknown for names not in the list.
Opcode OpcodeFromName(std::string_view name);
OpKind KindOf(Opcode op);

// Elementwise ops whose result shape equals the operand shape (apart from
// the element type for compare, convert, is-finite...).
bool IsElementwise(Opcode op);
// Ops that talk across replicas or partitions.
bool IsCollective(Opcode op);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_OPCODE_H_
