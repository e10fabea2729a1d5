#include "lib/hlo/input_output_alias.h"

#include <cctype>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/hlo/module.h"

namespace neuron::hlo {
namespace {

// A small cursor over the attribute's text; errors name the offset.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  void Skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool TryConsume(char c) {
    Skip();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  absl::Status Expect(char c, std::string_view where) {
    if (TryConsume(c)) return absl::OkStatus();
    return Error(absl::StrFormat("expected '%c' %s", c, std::string(where)));
  }
  absl::Status Int(int64_t* out) {
    Skip();
    size_t start = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    int64_t value = 0;
    bool digits = false;
    for (; at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_])); ++at_) {
      const int d = text_[at_] - '0';
      if (value > (INT64_MAX - d) / 10) return Error("number out of range");
      value = value * 10 + d;
      digits = true;
    }
    if (!digits) {
      at_ = start;
      return Error("expected a number");
    }
    *out = text_[start] == '-' ? -value : value;
    return absl::OkStatus();
  }
  // {a, b, ...}
  absl::Status Index(std::vector<int64_t>* out) {
    if (absl::Status s = Expect('{', "to open a shape index"); !s.ok()) return s;
    if (TryConsume('}')) return absl::OkStatus();
    do {
      int64_t v = 0;
      if (absl::Status s = Int(&v); !s.ok()) return s;
      if (v < 0) return Error("a shape index is never negative");
      out->push_back(v);
    } while (TryConsume(','));
    return Expect('}', "to close a shape index");
  }
  std::string_view Word() {
    Skip();
    size_t start = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '-' ||
                                  text_[at_] == '_'))
      ++at_;
    return text_.substr(start, at_ - start);
  }
  bool AtEnd() {
    Skip();
    return at_ == text_.size();
  }
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("input_output_alias: %s at offset %d", std::string(what), at_));
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

std::string IndexText(const std::vector<int64_t>& index) {
  return absl::StrCat("{", absl::StrJoin(index, ", "), "}");
}

// Instructions that only pass a value's bytes on (the planner gives them
// no buffer of their own).
bool IsViewOf(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kBitcastConvert:
      return true;
    default:
      return false;
  }
}

// A fusion that reads its operand `operand` lane by lane: every
// instruction elementwise over the full shape, and that parameter read only
// by them.
bool FusionReadsLaneByLane(const Instruction& fusion, size_t operand) {
  const Computation* callee = fusion.to_apply();
  if (callee == nullptr) return false;
  for (const Instruction* inst : callee->instructions()) {
    const Opcode op = inst->opcode();
    if (op == Opcode::kParameter) {
      if (inst->attrs().parameter_number != static_cast<int64_t>(operand)) continue;
      for (const Instruction* u : inst->users())
        if (!IsElementwise(u->opcode()) || u->shape().dims != fusion.shape().dims) return false;
      continue;
    }
    if (op == Opcode::kConstant || op == Opcode::kBroadcast || IsElementwise(op)) continue;
    return false;
  }
  return true;
}

// `reader` reads the value `v` (one of its operands) lane by lane while
// making a result of the same shape.
bool ReadsLaneByLane(const Instruction& reader, const std::set<const Instruction*>& v) {
  if (reader.opcode() == Opcode::kDynamicUpdateSlice) {
    for (size_t i = 1; i < reader.operand_count(); ++i)
      if (v.count(reader.operand(i))) return false;
    return v.count(reader.operand(0)) > 0;
  }
  if (reader.opcode() == Opcode::kFusion) {
    for (size_t i = 0; i < reader.operand_count(); ++i)
      if (v.count(reader.operand(i)) && !FusionReadsLaneByLane(reader, i)) return false;
    return true;
  }
  if (!IsElementwise(reader.opcode())) return false;
  for (const Instruction* o : reader.operands())
    if (v.count(o) && o->shape().dims != reader.shape().dims) return false;
  return true;
}

}  // namespace

bool AliasRunsInPlace(const Computation& entry, const InputOutputAlias& alias) {
  const Instruction* root = entry.root();
  if (root == nullptr || alias.parameter >= static_cast<int64_t>(entry.parameters().size())) return false;
  // The output's producer.
  const Instruction* producer = root;
  for (int64_t i : alias.output_index) {
    if (producer->opcode() != Opcode::kTuple || i >= static_cast<int64_t>(producer->operand_count())) return false;
    producer = producer->operand(static_cast<size_t>(i));
  }
  // The parameter's value and every view of it.
  std::set<const Instruction*> value;
  std::vector<const Instruction*> work;
  const Instruction* param = entry.parameter(static_cast<size_t>(alias.parameter));
  if (param == nullptr) return false;
  std::vector<std::pair<const Instruction*, size_t>> paths = {{param, 0}};
  while (!paths.empty()) {
    auto [inst, depth] = paths.back();
    paths.pop_back();
    if (depth == alias.parameter_index.size()) {
      work.push_back(inst);
      continue;
    }
    for (const Instruction* u : inst->users())
      if (u->opcode() == Opcode::kGetTupleElement && u->attrs().tuple_index == alias.parameter_index[depth])
        paths.push_back({u, depth + 1});
  }
  while (!work.empty()) {
    const Instruction* v = work.back();
    work.pop_back();
    if (!value.insert(v).second) continue;
    for (const Instruction* u : v->users())
      if (IsViewOf(*u)) work.push_back(u);
  }
  if (value.count(producer)) return true;  // the output is the input, unchanged
  std::map<const Instruction*, size_t> position;
  size_t at = 0;
  for (const Instruction* inst : entry.PostOrder()) position[inst] = at++;
  const size_t made = position.count(producer) ? position[producer] : 0;
  for (const Instruction* v : value) {
    // Any read of the whole parameter tuple reads this leaf too.
    for (const Instruction* u : v->users()) {
      if (value.count(u)) continue;
      if (u == producer) {
        if (!ReadsLaneByLane(*u, value)) return false;
      } else if (!position.count(u) || position[u] >= made) {
        return false;
      }
    }
  }
  // The whole parameter read elsewhere (not through the aliased leaf).
  if (!alias.parameter_index.empty())
    for (const Instruction* u : param->users())
      if (u->opcode() != Opcode::kGetTupleElement && (!position.count(u) || position[u] >= made)) return false;
  return true;
}

absl::StatusOr<std::vector<InputOutputAlias>> ParseInputOutputAlias(std::string_view text) {
  Reader r(text);
  std::vector<InputOutputAlias> out;
  if (absl::Status s = r.Expect('{', "to open the alias list"); !s.ok()) return s;
  if (r.TryConsume('}')) {
    if (!r.AtEnd()) return r.Error("unexpected text after the alias list");
    return out;
  }
  do {
    InputOutputAlias a;
    if (absl::Status s = r.Index(&a.output_index); !s.ok()) return s;
    if (absl::Status s = r.Expect(':', "after an output index"); !s.ok()) return s;
    if (absl::Status s = r.Expect('(', "to open a parameter"); !s.ok()) return s;
    if (absl::Status s = r.Int(&a.parameter); !s.ok()) return s;
    if (a.parameter < 0) return r.Error("a parameter number is never negative");
    if (absl::Status s = r.Expect(',', "after the parameter number"); !s.ok()) return s;
    if (absl::Status s = r.Index(&a.parameter_index); !s.ok()) return s;
    if (r.TryConsume(',')) {
      const std::string_view kind = r.Word();
      if (kind == "must-alias") {
        a.must_alias = true;
      } else if (kind != "may-alias") {
        return r.Error(absl::StrCat("unknown alias kind '", std::string(kind),
                                    "' (may-alias or must-alias)"));
      }
    }
    if (absl::Status s = r.Expect(')', "to close a parameter"); !s.ok()) return s;
    out.push_back(std::move(a));
  } while (r.TryConsume(','));
  if (absl::Status s = r.Expect('}', "to close the alias list"); !s.ok()) return s;
  if (!r.AtEnd()) return r.Error("unexpected text after the alias list");
  return out;
}

std::string FormatInputOutputAlias(const std::vector<InputOutputAlias>& aliases) {
  std::vector<std::string> parts;
  for (const InputOutputAlias& a : aliases) {
    parts.push_back(absl::StrFormat("%s: (%d, %s, %s)", IndexText(a.output_index), a.parameter,
                                    IndexText(a.parameter_index),
                                    a.must_alias ? "must-alias" : "may-alias"));
  }
  return absl::StrCat("{ ", absl::StrJoin(parts, ", "), " }");
}

absl::Status VerifyInputOutputAlias(const Module& module) {
  const std::vector<InputOutputAlias>& aliases = module.config().input_output_alias;
  if (aliases.empty()) return absl::OkStatus();
  const Computation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) return absl::OkStatus();
  std::set<std::vector<int64_t>> outputs;
  std::set<std::pair<int64_t, std::vector<int64_t>>> parameters;
  for (const InputOutputAlias& a : aliases) {
    const std::string where = absl::StrFormat("input_output_alias %s: (%d, %s)", IndexText(a.output_index),
                                              a.parameter, IndexText(a.parameter_index));
    const Shape* out = entry->root()->shape().Subshape(a.output_index);
    if (out == nullptr || !out->IsArray()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the entry's result has no array at that index"));
    }
    const Instruction* p = a.parameter < static_cast<int64_t>(entry->parameters().size())
                               ? entry->parameter(static_cast<size_t>(a.parameter))
                               : nullptr;
    if (p == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: the entry has %d parameters", where,
                                                        entry->parameters().size()));
    }
    const Shape* in = p->shape().Subshape(a.parameter_index);
    if (in == nullptr || !in->IsArray()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the parameter has no array at that index"));
    }
    // The same bytes: XLA accepts another shape of them (a bitcast).
    if (in->type != out->type || in->ElementCount() != out->ElementCount()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: the output is %s, the parameter %s", where,
                                                        out->ToString(false), in->ToString(false)));
    }
    if (!outputs.insert(a.output_index).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": that output is aliased twice"));
    }
    if (!parameters.insert({a.parameter, a.parameter_index}).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": that parameter is aliased twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace neuron::hlo
