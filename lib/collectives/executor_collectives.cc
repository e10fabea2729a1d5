#include "lib/collectives/executor_collectives.h"

#include "absl/strings/str_cat.h"

namespace neuron::collectives {
namespace {

Groups ToGroups(const std::vector<std::vector<int64_t>>& groups) {
  Groups out;
  out.reserve(groups.size());
  for (const auto& g : groups) out.emplace_back(g.begin(), g.end());
  return out;
}

}  // namespace

std::optional<DataType> FromHloType(hlo::ElementType type) {
  using E = hlo::ElementType;
  switch (type) {
    case E::kPred: case E::kU8: return DataType::kU8;
    case E::kS8: return DataType::kS8;
    case E::kU16: return DataType::kU16;
    case E::kS16: return DataType::kS16;
    case E::kU32: return DataType::kU32;
    case E::kS32: return DataType::kS32;
    case E::kU64: return DataType::kU64;
    case E::kS64: return DataType::kS64;
    case E::kF16: return DataType::kF16;
    case E::kBF16: return DataType::kBF16;
    case E::kF32: return DataType::kF32;
    case E::kF64: return DataType::kF64;
    default: return std::nullopt;
  }
}

std::optional<ReduceOp> FromHloReduction(hlo::Opcode op, hlo::ElementType type) {
  switch (op) {
    case hlo::Opcode::kAdd: return ReduceOp::kSum;
    case hlo::Opcode::kMultiply: return ReduceOp::kProd;
    case hlo::Opcode::kMaximum: return ReduceOp::kMax;
    case hlo::Opcode::kMinimum: return ReduceOp::kMin;
    case hlo::Opcode::kAnd:
      if (type == hlo::ElementType::kPred) return ReduceOp::kMin;
      return std::nullopt;
    case hlo::Opcode::kOr:
      if (type == hlo::ElementType::kPred) return ReduceOp::kMax;
      return std::nullopt;
    default: return std::nullopt;
  }
}

absl::Status CommunicatorCollectives::AllReduce(const kernels::CollectiveCall& call,
                                                hlo::Opcode reduction, const void* in,
                                                void* out, int64_t count) {
  const auto type = FromHloType(call.type);
  const auto op = FromHloReduction(reduction, call.type);
  if (!type || !op || count < 0) {
    return absl::UnimplementedError(absl::StrCat(
        "cross-rank all-reduce with ", std::string(hlo::OpcodeName(reduction)),
        " over element type ",
        static_cast<int>(call.type), " is not supported"));
  }
  return comm_->AllReduce(in, out, static_cast<size_t>(count), *type, *op,
                          ToGroups(call.replica_groups));
}

absl::Status CommunicatorCollectives::AllGather(const kernels::CollectiveCall& call,
                                                const void* in, void* out, int64_t bytes) {
  if (bytes < 0) return absl::InvalidArgumentError("negative all-gather size");
  return comm_->AllGather(in, out, static_cast<size_t>(bytes), DataType::kU8,
                          ToGroups(call.replica_groups));
}

absl::Status CommunicatorCollectives::CollectivePermute(
    const kernels::CollectiveCall& call,
    const std::vector<std::pair<int64_t, int64_t>>& source_target_pairs, const void* in,
    void* out, int64_t bytes) {
  if (bytes < 0) return absl::InvalidArgumentError("negative collective-permute size");
  std::vector<std::pair<int, int>> pairs;
  pairs.reserve(source_target_pairs.size());
  for (const auto& [s, t] : source_target_pairs) {
    pairs.emplace_back(static_cast<int>(s), static_cast<int>(t));
  }
  return comm_->Permute(in, out, static_cast<size_t>(bytes), pairs);
}

}  // namespace neuron::collectives
