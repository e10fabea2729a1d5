#include "lib/hlo/opcode.h"

#include <string_view>

namespace neuron::hlo {
namespace {

struct OpcodeInfo {
  Opcode op;
  std::string_view name;
  OpKind kind;
};

constexpr OpcodeInfo kOpcodes[] = {
#define NEURON_HLO_OPCODE_INFO(e, text, kind) {Opcode::e, text, OpKind::kind},
    NEURON_HLO_OPCODES(NEURON_HLO_OPCODE_INFO)
#undef NEURON_HLO_OPCODE_INFO
};

}  // namespace

std::string_view OpcodeName(Opcode op) {
  size_t i = static_cast<size_t>(op);
  return i < std::size(kOpcodes) ? kOpcodes[i].name : "unknown";
}

Opcode OpcodeFromName(std::string_view name) {
  for (const OpcodeInfo& info : kOpcodes) {
    if (info.name == name) return info.op;
  }
  return Opcode::kUnknown;
}

OpKind KindOf(Opcode op) {
  size_t i = static_cast<size_t>(op);
  return i < std::size(kOpcodes) ? kOpcodes[i].kind : OpKind::kOther;
}

bool IsElementwise(Opcode op) {
  switch (KindOf(op)) {
    case OpKind::kUnary:
    case OpKind::kUnaryPred:
    case OpKind::kBinary:
    case OpKind::kLogical:
      return true;
    case OpKind::kOther:
      break;
  }
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kConvert:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kComplex:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsCollective(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kReduceScatter:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      return true;
    default:
      return false;
  }
}

}  // namespace neuron::hlo
