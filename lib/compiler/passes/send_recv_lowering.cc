// Lowers device-to-device send/recv pairs to collective-permute, the
// operation they spell out step by step: the data of a `send` reaches the
// matching `recv` on the targets of `_xla_send_recv_source_target_pairs`.
// A recv is matched with the send of the same computation, channel and
// pairs (the k-th recv with the k-th send when several share them, as XLA
// issues them in order). recv-done's data becomes the permute, its token
// and send-done's a fresh after-all; the four instructions are removed.
//
// Host transfers (is_host_transfer) are XLA's outfeed and infeed under
// another name: a host send hands its operand to the host, a host recv
// takes its value from it, in program order, so they become outfeed and
// infeed (neuron-exec --outfeed-dir / --infeed). A device transfer of no
// data (an empty tuple, zero elements) moves nothing: its -done yields an
// empty value and a fresh token. Unmatched halves that do carry data are
// left alone: the support check then refuses them by name.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/compiler/diagnostics.h"
#include "lib/compiler/error_codes.h"
#include "lib/compiler/ir_util.h"
#include "lib/compiler/passes/passes.h"

namespace neuron::compiler {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr std::string_view kPairsAttr = "_xla_send_recv_source_target_pairs";

const std::string* FrontendAttribute(const Instruction& inst, std::string_view key) {
  for (const auto& [k, v] : inst.attrs().frontend_attributes) {
    if (k == key) return &v;
  }
  return nullptr;
}

// "{{1,0},{2,1}}" -> {(1,0),(2,1)}; nullopt when malformed.
std::optional<std::vector<std::pair<int64_t, int64_t>>> ParsePairs(std::string_view text) {
  std::vector<int64_t> numbers;
  int depth = 0;
  for (size_t i = 0; i < text.size();) {
    char ch = text[i];
    if (ch == '{') {
      if (++depth > 2) return std::nullopt;
      ++i;
    } else if (ch == '}') {
      if (--depth < 0) return std::nullopt;
      ++i;
    } else if (ch == ',' || ch == ' ') {
      ++i;
    } else if (ch >= '0' && ch <= '9') {
      int64_t v = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') v = v * 10 + (text[i++] - '0');
      numbers.push_back(v);
    } else {
      return std::nullopt;
    }
  }
  if (depth != 0 || numbers.size() % 2 != 0) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < numbers.size(); i += 2) pairs.emplace_back(numbers[i], numbers[i + 1]);
  return pairs;
}

// The -done instruction of a send or recv (its only user of that opcode).
Instruction* DoneOf(const Instruction* start, Opcode done_opcode) {
  for (Instruction* u : start->users()) {
    if (u->opcode() == done_opcode) return u;
  }
  return nullptr;
}

class SendRecvLoweringPass : public Pass {
 public:
  std::string_view Name() const override { return "send-recv-lowering"; }

  absl::StatusOr<bool> Run(hlo::Module& module) override {
    if (!HasAnyOpcode(module, {Opcode::kSend, Opcode::kRecv})) return false;
    bool changed = false;
    NameUniquer names(module);
    for (hlo::Computation* c : module.computations()) {
      absl::StatusOr<bool> r = RunOn(c, names);
      if (!r.ok()) return r.status();
      changed |= *r;
    }
    return changed;
  }

 private:
  using Key = std::tuple<int64_t, std::string>;  // channel, pairs text

  static std::optional<Key> KeyOf(const Instruction& inst) {
    if (inst.attrs().is_host_transfer) return std::nullopt;
    const std::string* pairs = FrontendAttribute(inst, kPairsAttr);
    if (!pairs) return std::nullopt;
    return Key{inst.attrs().channel_id.value_or(-1), *pairs};
  }

  absl::StatusOr<bool> RunOn(hlo::Computation* c, NameUniquer& names) {
    std::map<Key, std::vector<Instruction*>> sends, recvs;
    bool changed = false;
    // Taken first: lowering removes instructions (the -done ones) that a
    // walk of the post order would reach later.
    std::vector<Instruction*> transfers;
    for (Instruction* inst : c->PostOrder())
      if (inst->opcode() == Opcode::kSend || inst->opcode() == Opcode::kRecv) transfers.push_back(inst);
    for (Instruction* inst : transfers) {
      absl::StatusOr<bool> lowered = inst->attrs().is_host_transfer ? LowerHostTransfer(c, names, inst)
                                                                    : LowerEmptyTransfer(c, names, inst);
      if (!lowered.ok()) return lowered.status();
      if (*lowered) {
        changed = true;
        continue;
      }
      std::optional<Key> key = KeyOf(*inst);
      if (!key) continue;
      (inst->opcode() == Opcode::kSend ? sends : recvs)[*key].push_back(inst);
    }
    for (auto& [key, rs] : recvs) {
      auto it = sends.find(key);
      if (it == sends.end()) continue;
      for (size_t k = 0; k < rs.size() && k < it->second.size(); ++k) {
        absl::StatusOr<bool> r = LowerPair(c, names, it->second[k], rs[k]);
        if (!r.ok()) return r.status();
        changed |= *r;
      }
    }
    return changed;
  }

  // send(data, token) + send-done -> outfeed(data, token);
  // recv(token) + recv-done -> infeed(token), the same (data, token).
  absl::StatusOr<bool> LowerHostTransfer(hlo::Computation* c, NameUniquer& names, Instruction* start) {
    const bool send = start->opcode() == Opcode::kSend;
    Instruction* done = DoneOf(start, send ? Opcode::kSendDone : Opcode::kRecvDone);
    const size_t operands = send ? 2 : 1;
    if (!done || start->users().size() != 1 || start->operand_count() != operands ||
        !start->operand(operands - 1)->shape().IsToken() ||
        (!send && (!done->shape().IsTuple() || done->shape().tuple.size() != 2))) {
      return false;  // an unusual form: left for the support check to name
    }
    Instruction* token = start->operand(operands - 1);
    Instruction* feed =
        send ? AddInstruction(c, Opcode::kOutfeed, names.Get("outfeed"), hlo::Shape::Token(),
                              {start->operand(0), token})
             : AddInstruction(c, Opcode::kInfeed, names.Get("infeed"), done->shape(), {token});
    feed->attrs().metadata = start->attrs().metadata;
    done->ReplaceAllUsesWith(feed);
    for (Instruction* dead : {done, start}) {
      if (absl::Status st = c->RemoveInstruction(dead); !st.ok()) return st;
    }
    return true;
  }

  static bool NoBytes(const hlo::Shape& shape) {
    if (shape.IsTuple()) {
      for (const hlo::Shape& e : shape.tuple)
        if (!NoBytes(e)) return false;
      return true;
    }
    std::optional<int64_t> n = shape.ElementCount();
    return shape.IsArray() && n && *n == 0;
  }

  // A value of `shape`, which holds no elements.
  static Instruction* EmptyValue(hlo::Computation* c, NameUniquer& names, const hlo::Shape& shape) {
    if (shape.IsTuple()) {
      std::vector<Instruction*> elements;
      for (const hlo::Shape& e : shape.tuple) elements.push_back(EmptyValue(c, names, e));
      return AddInstruction(c, Opcode::kTuple, names.Get("tuple"), shape, elements);
    }
    Instruction* zero = AddScalarConstant(c, names, shape.type, 0);
    return AddInstruction(c, Opcode::kBroadcast, names.Get("broadcast"), shape, {zero});
  }

  // A device send or recv of no data: nothing to move, whatever its peer.
  absl::StatusOr<bool> LowerEmptyTransfer(hlo::Computation* c, NameUniquer& names, Instruction* start) {
    const bool send = start->opcode() == Opcode::kSend;
    Instruction* done = DoneOf(start, send ? Opcode::kSendDone : Opcode::kRecvDone);
    if (!done || start->users().size() != 1) return false;
    if (send ? (start->operand_count() < 1 || !NoBytes(start->operand(0)->shape()))
             : (!done->shape().IsTuple() || done->shape().tuple.size() != 2 ||
                !NoBytes(done->shape().tuple[0]))) {
      return false;
    }
    Instruction* token = AddInstruction(c, Opcode::kAfterAll, names.Get("after-all"), hlo::Shape::Token());
    Instruction* result =
        send ? token
             : AddInstruction(c, Opcode::kTuple, names.Get("tuple"), done->shape(),
                              {EmptyValue(c, names, done->shape().tuple[0]), token});
    done->ReplaceAllUsesWith(result);
    for (Instruction* dead : {done, start}) {
      if (absl::Status st = c->RemoveInstruction(dead); !st.ok()) return st;
    }
    return true;
  }

  absl::StatusOr<bool> LowerPair(hlo::Computation* c, NameUniquer& names, Instruction* send, Instruction* recv) {
    Instruction* send_done = DoneOf(send, Opcode::kSendDone);
    Instruction* recv_done = DoneOf(recv, Opcode::kRecvDone);
    if (!send_done || !recv_done || send->users().size() != 1 || recv->users().size() != 1 ||
        send->operand_count() < 1 || !recv_done->shape().IsTuple() || recv_done->shape().tuple.size() != 2) {
      return false;  // an unusual form: left for the support check to name
    }
    std::optional<std::vector<std::pair<int64_t, int64_t>>> pairs =
        ParsePairs(*FrontendAttribute(*recv, kPairsAttr));
    if (!pairs) {
      return CompileError(kErrVerifyFailed,
                          absl::StrFormat("%s is not a list of {source,target} pairs",
                                          std::string(kPairsAttr)),
                          recv);
    }
    Instruction* data = send->operand(0);
    const hlo::Shape& data_shape = recv_done->shape().tuple[0];
    if (!data->shape().Compatible(data_shape)) {
      return CompileError(kErrVerifyFailed,
                          absl::StrFormat("recv of %s is matched with a send of %s", data_shape.ToString(false),
                                          data->shape().ToString(false)),
                          recv);
    }
    Instruction* permute =
        AddInstruction(c, Opcode::kCollectivePermute, names.Get("collective-permute"), data_shape, {data});
    permute->attrs().source_target_pairs = *pairs;
    permute->attrs().channel_id = recv->attrs().channel_id;
    permute->attrs().metadata = recv->attrs().metadata;
    Instruction* token = AddInstruction(c, Opcode::kAfterAll, names.Get("after-all"), hlo::Shape::Token());
    Instruction* result =
        AddInstruction(c, Opcode::kTuple, names.Get("tuple"), recv_done->shape(), {permute, token});
    recv_done->ReplaceAllUsesWith(result);
    send_done->ReplaceAllUsesWith(token);
    for (Instruction* dead : {recv_done, send_done, recv, send}) {
      if (absl::Status s = c->RemoveInstruction(dead); !s.ok()) return s;
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeSendRecvLoweringPass() { return std::make_unique<SendRecvLoweringPass>(); }

}  // namespace neuron::compiler
