#include "lib/hlo/text_parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <algorithm>
#include <map>
#include <unordered_map>

#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "lib/hlo/lexer.h"

namespace neuron::hlo {
namespace {

#define HLO_RETURN_IF_ERROR(expr)        \
  do {                                   \
    absl::Status _status = (expr);       \
    if (!_status.ok()) return _status;   \
  } while (0)

// Damaged or hostile input must not blow the stack: cap nesting.
constexpr int kMaxNesting = 64;
constexpr size_t kMaxRank = 1024;

bool ParseI64(std::string_view text, int64_t* value) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

std::vector<std::string_view> Split(std::string_view text, char sep, bool skip_empty = false) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    std::string_view piece = text.substr(start, at == std::string_view::npos ? at : at - start);
    if (!skip_empty || !piece.empty()) out.push_back(piece);
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// "3x3" / "0_1x2_2" pieces split by 'x'.
std::vector<std::string_view> SplitX(std::string_view text) { return Split(text, 'x'); }

// ---------------------------------------------------------------------------
// Shapes and literals.

absl::Status ParseShapeAt(Lexer& lx, Shape* shape, int depth) {
  if (depth > kMaxNesting) return lx.ErrorHere("shape is nested too deeply");
  if (lx.TryConsume('(')) {
    shape->type = ElementType::kTuple;
    if (lx.TryConsume(')')) return absl::OkStatus();
    while (true) {
      Shape element;
      HLO_RETURN_IF_ERROR(ParseShapeAt(lx, &element, depth + 1));
      shape->tuple.push_back(std::move(element));
      if (lx.TryConsume(')')) return absl::OkStatus();
      HLO_RETURN_IF_ERROR(lx.Expect(',', "between tuple element shapes"));
    }
  }
  size_t type_pos = (lx.SkipTrivia(), lx.pos());
  std::string type_name;
  HLO_RETURN_IF_ERROR(lx.ReadName(&type_name, "a shape"));
  std::optional<ElementType> type = ElementTypeFromName(type_name);
  if (!type || *type == ElementType::kTuple) {
    return lx.ErrorAt(type_pos, absl::StrFormat("unknown element type '%s'", type_name));
  }
  shape->type = *type;
  HLO_RETURN_IF_ERROR(lx.Expect('[', "after the element type"));
  if (!lx.TryConsume(']')) {
    while (true) {
      if (shape->dims.size() >= kMaxRank) return lx.ErrorHere("shape has too many dimensions");
      bool dynamic = false;
      int64_t dim;
      if (lx.TryConsume('?')) {
        dynamic = true;
        dim = std::numeric_limits<int64_t>::min();
      } else {
        if (lx.TryConsume('<')) {
          HLO_RETURN_IF_ERROR(lx.Expect('=', "in a bounded dynamic dimension '<=N'"));
          dynamic = true;
        }
        size_t dim_pos = (lx.SkipTrivia(), lx.pos());
        HLO_RETURN_IF_ERROR(lx.ReadInt(&dim, "a dimension size"));
        if (dim < 0) return lx.ErrorAt(dim_pos, "dimension sizes cannot be negative");
      }
      if (dynamic && shape->dynamic.size() < shape->dims.size() + 1) {
        shape->dynamic.resize(shape->dims.size() + 1, false);
        shape->dynamic.back() = true;
      }
      shape->dims.push_back(dim);
      if (lx.TryConsume(']')) break;
      HLO_RETURN_IF_ERROR(lx.Expect(',', "between dimensions"));
    }
    if (!shape->dynamic.empty()) shape->dynamic.resize(shape->dims.size(), false);
  }
  // A layout follows the ']' directly; a '{' after a space opens a body.
  if (lx.PeekRaw() == '{') {
    size_t b, e;
    HLO_RETURN_IF_ERROR(lx.CaptureBalanced('{', '}', &b, &e));
    Layout layout;
    Lexer inner(lx.source(), b, e);
    if (inner.Peek() != ':' && !inner.AtEnd()) {
      while (true) {
        int64_t v;
        HLO_RETURN_IF_ERROR(inner.ReadInt(&v, "a layout dimension"));
        layout.minor_to_major.push_back(v);
        if (!inner.TryConsume(',')) break;
      }
    }
    if (inner.TryConsume(':')) {
      inner.SkipTrivia();
      layout.details = std::string(inner.Slice(inner.pos(), e));
    } else if (!inner.AtEnd()) {
      return inner.ErrorHere("unexpected text in layout");
    }
    shape->layout = std::move(layout);
  }
  return absl::OkStatus();
}

class LiteralParser {
 public:
  explicit LiteralParser(Lexer& lx) : lx_(lx) {}

  absl::Status Parse(const Shape& shape, Literal* out, int depth) {
    if (depth > kMaxNesting) return lx_.ErrorHere("literal is nested too deeply");
    if (shape.IsTuple()) {
      HLO_RETURN_IF_ERROR(lx_.Expect('(', "to open a tuple literal"));
      std::vector<Literal> elements;
      for (size_t i = 0; i < shape.tuple.size(); ++i) {
        if (i) HLO_RETURN_IF_ERROR(lx_.Expect(',', "between tuple literal elements"));
        Literal element;
        HLO_RETURN_IF_ERROR(Parse(shape.tuple[i], &element, depth + 1));
        elements.push_back(std::move(element));
      }
      HLO_RETURN_IF_ERROR(lx_.Expect(')', "to close a tuple literal"));
      *out = Literal::MakeTuple(std::move(elements));
      return absl::OkStatus();
    }
    if (!shape.IsArray()) {
      // Tokens and the like carry no data.
      *out = Literal::Zeros(shape);
      return absl::OkStatus();
    }
    // "{...}": the printer left the values out.
    size_t save = (lx_.SkipTrivia(), lx_.pos());
    if (lx_.TryConsume('{')) {
      lx_.SkipTrivia();
      if (lx_.Slice(lx_.pos(), std::min(lx_.pos() + 3, lx_.end())) == "...") {
        lx_.set_pos(lx_.pos() + 3);
        HLO_RETURN_IF_ERROR(lx_.Expect('}', "after '{...'"));
        *out = Literal::Elided(shape);
        return absl::OkStatus();
      }
      lx_.set_pos(save);
    }
    std::optional<int64_t> count = shape.ElementCount();
    // Each value takes at least one character, which bounds what a shape
    // may claim before we allocate for it.
    if (!count || *count > static_cast<int64_t>(lx_.end() - save) + 1) {
      return lx_.ErrorAt(save, absl::StrFormat("literal has fewer values than its shape %s needs",
                                               shape.ToString(false)));
    }
    *out = Literal::Zeros(shape);
    int64_t index = 0;
    return ParseArray(shape, 0, out, &index);
  }

 private:
  absl::Status ParseArray(const Shape& shape, size_t dim, Literal* lit, int64_t* index) {
    if (dim == shape.dims.size()) return ParseElement(shape.type, lit, (*index)++);
    HLO_RETURN_IF_ERROR(lx_.Expect('{', absl::StrFormat("to open dimension %d of the literal", dim)));
    for (int64_t i = 0; i < shape.dims[dim]; ++i) {
      if (i) {
        if (lx_.Peek() == '}') {
          return lx_.ErrorHere(absl::StrFormat(
              "literal has %d values in dimension %d, the shape %s says %d", i, dim,
              shape.ToString(false), shape.dims[dim]));
        }
        HLO_RETURN_IF_ERROR(lx_.Expect(',', "between literal values"));
      }
      HLO_RETURN_IF_ERROR(ParseArray(shape, dim + 1, lit, index));
    }
    if (shape.dims[dim] > 0) lx_.TryConsume(',');  // tolerate a trailing comma
    if (lx_.Peek() != '}') {
      return lx_.ErrorHere(absl::StrFormat(
          "literal has more than %d values in dimension %d of shape %s", shape.dims[dim], dim,
          shape.ToString(false)));
    }
    return lx_.Expect('}', "");
  }

  absl::Status ReadDouble(double* value) {
    size_t pos = (lx_.SkipTrivia(), lx_.pos());
    std::string_view text;
    HLO_RETURN_IF_ERROR(lx_.ReadNumberText(&text, "a number"));
    std::string copy(text);
    char* end = nullptr;
    *value = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size() || copy.empty()) {
      return lx_.ErrorAt(pos, absl::StrFormat("'%s' is not a number", text));
    }
    return absl::OkStatus();
  }

  absl::Status ParseElement(ElementType type, Literal* lit, int64_t i) {
    if (IsComplex(type)) {
      double re, im;
      HLO_RETURN_IF_ERROR(lx_.Expect('(', "to open a complex value"));
      HLO_RETURN_IF_ERROR(ReadDouble(&re));
      HLO_RETURN_IF_ERROR(lx_.Expect(',', "in a complex value"));
      HLO_RETURN_IF_ERROR(ReadDouble(&im));
      HLO_RETURN_IF_ERROR(lx_.Expect(')', "to close a complex value"));
      lit->SetComplex(i, re, im);
      return absl::OkStatus();
    }
    size_t pos = (lx_.SkipTrivia(), lx_.pos());
    std::string_view text;
    HLO_RETURN_IF_ERROR(lx_.ReadNumberText(&text, "a literal value"));
    if (type == ElementType::kPred) {
      if (text == "true" || text == "1") {
        lit->SetInt(i, 1);
      } else if (text == "false" || text == "0") {
        lit->SetInt(i, 0);
      } else {
        return lx_.ErrorAt(pos, absl::StrFormat("'%s' is not a pred value (true/false)", text));
      }
      return absl::OkStatus();
    }
    if (IsInteger(type)) {
      std::string_view digits = text;
      if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
      if (IsUnsignedInt(type) && !digits.empty() && digits[0] != '-') {
        uint64_t u;
        auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u);
        if (ec == std::errc() && ptr == digits.data() + digits.size()) {
          lit->SetInt(i, static_cast<int64_t>(u));
          return absl::OkStatus();
        }
      }
      int64_t v;
      if (ParseI64(digits, &v)) {
        lit->SetInt(i, v);
        return absl::OkStatus();
      }
      if (text == "true" || text == "false") {
        lit->SetInt(i, text == "true");
        return absl::OkStatus();
      }
    }
    std::string copy(text);
    char* end = nullptr;
    double d = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) {
      return lx_.ErrorAt(pos, absl::StrFormat("'%s' is not a valid %s value", text,
                                              ElementTypeName(type)));
    }
    lit->SetDouble(i, d);
    return absl::OkStatus();
  }

  Lexer& lx_;
};

// ---------------------------------------------------------------------------
// The module parser.

struct PendingName {
  std::string name;
  size_t offset;
};

struct PendingInstruction {
  Instruction* inst;
  std::vector<PendingName> operands;
  std::vector<PendingName> control_predecessors;
  // (role keyword, computation names) in the order written.
  std::vector<std::pair<std::string, std::vector<PendingName>>> calls;
};

class Parser {
 public:
  explicit Parser(const SourceMap* source) : src_(source), lx_(source) {}

  absl::StatusOr<std::unique_ptr<Module>> ParseModule();

 private:
  absl::Status ParseHeader(Module* module);
  absl::Status SkipStackFrameSection();
  absl::Status ParseComputation(Module* module);
  absl::Status ParseInstruction(Computation* comp, std::vector<PendingInstruction>* pending);
  absl::Status ParseOperands(PendingInstruction* p);
  absl::Status ParseAttribute(PendingInstruction* p);
  absl::Status ResolveCalls(Module* module);

  // Value parsers over the raw range [b, e) of an attribute value.
  absl::Status IntList(size_t b, size_t e, std::vector<int64_t>* out);
  absl::Status IntValue(size_t b, size_t e, int64_t* out);
  absl::Status BoolValue(size_t b, size_t e, bool* out);
  absl::Status WordValue(size_t b, size_t e, std::string* out);
  absl::Status NameList(size_t b, size_t e, std::vector<PendingName>* out);
  absl::Status SliceValue(size_t b, size_t e, std::vector<SliceDim>* out);
  absl::Status PaddingValue(size_t b, size_t e, std::vector<PaddingDim>* out);
  absl::Status WindowValue(size_t b, size_t e, std::vector<WindowDim>* out);
  absl::Status DimLabels(size_t b, size_t e, ConvDims* out);
  absl::Status ReplicaGroups(size_t b, size_t e, std::vector<std::vector<int64_t>>* out);
  absl::Status MeshReplicaGroups(size_t b, size_t e, std::vector<std::vector<int64_t>>* out);
  absl::Status PairList(size_t b, size_t e, std::vector<std::pair<int64_t, int64_t>>* out);
  absl::Status MetadataValue(size_t b, size_t e, Metadata* out);
  absl::Status KeyValueList(size_t b, size_t e,
                            std::vector<std::pair<std::string, std::string>>* out);
  absl::Status LiteralValue(size_t b, size_t e, const Shape& shape, Literal* out);
  std::string TextOrString(size_t b, size_t e);
  absl::Status ExpectEnd(Lexer& inner, std::string_view what);

  // Charges `total` device ids of an iota or mesh replica_groups form to the
  // module's budget: a few characters name 2^20 ids, so without one a few
  // kilobytes of instructions expand to gigabytes.
  absl::Status SpendDeviceIds(size_t b, int64_t total) {
    if (total > device_ids_left_) {
      return src_->Error(b, absl::StrFormat("replica_groups expand to %d device ids, more than the %d left "
                                            "of the module's budget of %d",
                                            total, device_ids_left_, kMaxDeviceIds));
    }
    device_ids_left_ -= total;
    return absl::OkStatus();
  }

  const SourceMap* src_;
  Lexer lx_;
  // Computation references, resolved once every computation is known.
  std::vector<PendingInstruction> all_calls_;
  static constexpr int64_t kMaxDeviceIds = int64_t{1} << 20;
  int64_t device_ids_left_ = kMaxDeviceIds;
};

absl::Status Parser::ExpectEnd(Lexer& inner, std::string_view what) {
  if (!inner.AtEnd()) {
    return inner.ErrorHere(absl::StrFormat("unexpected text in %s", what));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Module>> Parser::ParseModule() {
  if (lx_.AtEnd()) return src_->Error(0, "empty input: expected 'HloModule'");
  if (!lx_.TryConsumeWord("HloModule")) {
    return lx_.ErrorHere("expected 'HloModule' at the start of HLO text");
  }
  std::string name;
  HLO_RETURN_IF_ERROR(lx_.ReadName(&name, "a module name after 'HloModule'"));
  auto module = std::make_unique<Module>(name);
  HLO_RETURN_IF_ERROR(ParseHeader(module.get()));
  while (!lx_.AtEnd()) {
    HLO_RETURN_IF_ERROR(SkipStackFrameSection());
    if (lx_.AtEnd()) break;
    HLO_RETURN_IF_ERROR(ParseComputation(module.get()));
  }
  if (module->computation_count() == 0) {
    return lx_.ErrorHere(absl::StrFormat("module '%s' has no computations", name));
  }
  if (!module->entry()) {
    // XLA's rule: without ENTRY, the last computation is the entry.
    module->set_entry(module->computations().back());
  }
  HLO_RETURN_IF_ERROR(ResolveCalls(module.get()));
  // Text has no ids: number instructions in module order.
  int64_t next_id = 0;
  for (Computation* c : module->computations()) {
    c->set_id(next_id++);
  }
  for (Computation* c : module->computations()) {
    for (Instruction* inst : c->instructions()) inst->set_id(next_id++);
  }
  return module;
}

// Newer JAX dumps put a stack-frame index between the header and the
// computations ("FileNames", "FunctionNames", "FileLocations",
// "StackFrames", each followed by numbered entries). Metadata refers to it
// by stack_frame_id; we do not need it, so skip it.
absl::Status Parser::SkipStackFrameSection() {
  while (lx_.TryConsumeWord("FileNames") || lx_.TryConsumeWord("FunctionNames") ||
         lx_.TryConsumeWord("FileLocations") || lx_.TryConsumeWord("StackFrames")) {
    while (std::isdigit(static_cast<unsigned char>(lx_.Peek()))) {
      int64_t index;
      HLO_RETURN_IF_ERROR(lx_.ReadInt(&index, "a stack frame index entry"));
      if (lx_.Peek() == '"') {
        std::string ignored;
        HLO_RETURN_IF_ERROR(lx_.ReadString(&ignored, "a stack frame index entry"));
      } else {
        size_t b, e;
        HLO_RETURN_IF_ERROR(lx_.CaptureBalanced('{', '}', &b, &e));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseHeader(Module* module) {
  ModuleConfig& config = module->config();
  while (lx_.TryConsume(',')) {
    size_t key_pos = (lx_.SkipTrivia(), lx_.pos());
    std::string key;
    HLO_RETURN_IF_ERROR(lx_.ReadName(&key, "a module attribute name"));
    HLO_RETURN_IF_ERROR(lx_.Expect('=', absl::StrFormat("after '%s'", key)));
    size_t b, e;
    HLO_RETURN_IF_ERROR(lx_.CaptureValue(&b, &e));
    std::string value(lx_.Slice(b, e));
    if (key == "replica_count" || key == "num_partitions") {
      int64_t n;
      HLO_RETURN_IF_ERROR(IntValue(b, e, &n));
      if (n < 1) return src_->Error(key_pos, absl::StrFormat("%s must be at least 1", key));
      if (key == "replica_count") {
        config.replica_count = n;
        config.replica_count_given = true;
      } else {
        config.num_partitions = n;
        config.num_partitions_given = true;
      }
    } else if (key == "is_scheduled") {
      HLO_RETURN_IF_ERROR(BoolValue(b, e, &config.is_scheduled));
    } else if (key == "input_output_alias") {
      absl::StatusOr<std::vector<InputOutputAlias>> aliases = ParseInputOutputAlias(value);
      if (!aliases.ok()) return src_->Error(b, std::string(aliases.status().message()));
      config.input_output_alias = std::move(*aliases);
    }
    config.header_attributes.emplace_back(key, value);
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseComputation(Module* module) {
  size_t start = (lx_.SkipTrivia(), lx_.pos());
  bool is_entry = lx_.TryConsumeWord("ENTRY");
  std::string name;
  HLO_RETURN_IF_ERROR(lx_.ReadName(&name, "a computation name (or ENTRY)"));
  if (module->Find(name)) {
    return src_->Error(start, absl::StrFormat("computation '%s' is defined twice", name));
  }
  auto comp = std::make_unique<Computation>(name);
  comp->set_line(src_->Line(start));
  if (lx_.Peek() == '(') {
    size_t b, e;
    HLO_RETURN_IF_ERROR(lx_.CaptureBalanced('(', ')', &b, &e));
    HLO_RETURN_IF_ERROR(lx_.ExpectArrow());
    Shape result;
    HLO_RETURN_IF_ERROR(ParseShapeAt(lx_, &result, 0));
  }
  while (lx_.TryConsume(',')) {
    std::string key;
    HLO_RETURN_IF_ERROR(lx_.ReadName(&key, "a computation attribute name"));
    HLO_RETURN_IF_ERROR(lx_.Expect('=', absl::StrFormat("after '%s'", key)));
    size_t b, e;
    HLO_RETURN_IF_ERROR(lx_.CaptureValue(&b, &e));
    if (key == "execution_thread") comp->set_execution_thread(TextOrString(b, e));
  }
  HLO_RETURN_IF_ERROR(lx_.Expect('{', absl::StrFormat("to open computation '%s'", name)));

  std::vector<PendingInstruction> pending;
  std::unordered_map<std::string_view, Instruction*> by_name;
  Instruction* marked_root = nullptr;
  while (!lx_.TryConsume('}')) {
    if (lx_.AtEnd()) {
      return src_->Error(start, absl::StrFormat("computation '%s' is never closed with '}'", name));
    }
    size_t inst_pos = (lx_.SkipTrivia(), lx_.pos());
    bool is_root = lx_.TryConsumeWord("ROOT");
    HLO_RETURN_IF_ERROR(ParseInstruction(comp.get(), &pending));
    Instruction* added = pending.back().inst;
    if (!by_name.emplace(added->name(), added).second) {
      return src_->Error(inst_pos, absl::StrFormat(
          "instruction name '%s' is defined twice in computation '%s'", added->name(), name));
    }
    if (is_root) {
      if (marked_root) {
        return src_->Error(inst_pos, absl::StrFormat("computation '%s' has two ROOT instructions", name));
      }
      marked_root = pending.back().inst;
    }
  }
  // Old printers put computation attributes after the body: "}, execution_thread=...".
  while (lx_.TryConsume(',')) {
    std::string key;
    HLO_RETURN_IF_ERROR(lx_.ReadName(&key, "a computation attribute name"));
    HLO_RETURN_IF_ERROR(lx_.Expect('=', absl::StrFormat("after '%s'", key)));
    size_t b, e;
    HLO_RETURN_IF_ERROR(lx_.CaptureValue(&b, &e));
    if (key == "execution_thread") comp->set_execution_thread(TextOrString(b, e));
  }
  if (pending.empty()) {
    return src_->Error(start, absl::StrFormat("computation '%s' has no instructions", name));
  }
  comp->set_root(marked_root ? marked_root : pending.back().inst);

  // Resolve operands by name within the computation (any order allowed).
  for (PendingInstruction& p : pending) {
    for (const PendingName& op : p.operands) {
      auto it = by_name.find(op.name);
      if (it == by_name.end()) {
        return src_->Error(op.offset, absl::StrFormat(
            "instruction '%s' uses '%s', which computation '%s' does not define",
            p.inst->name(), op.name, name));
      }
      p.inst->AddOperand(it->second);
    }
    for (const PendingName& pred : p.control_predecessors) {
      auto it = by_name.find(pred.name);
      if (it == by_name.end()) {
        return src_->Error(pred.offset, absl::StrFormat(
            "control predecessor '%s' of '%s' is not defined in computation '%s'",
            pred.name, p.inst->name(), name));
      }
      p.inst->AddControlPredecessor(it->second);
    }
    if (!p.calls.empty()) all_calls_.push_back(std::move(p));
  }
  Computation* raw = module->AddComputation(std::move(comp));
  if (is_entry) {
    if (module->entry()) {
      return src_->Error(start, "module has two ENTRY computations");
    }
    module->set_entry(raw);
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseInstruction(Computation* comp, std::vector<PendingInstruction>* pending) {
  size_t start = (lx_.SkipTrivia(), lx_.pos());
  std::string name;
  HLO_RETURN_IF_ERROR(lx_.ReadName(&name, "an instruction name"));
  HLO_RETURN_IF_ERROR(lx_.Expect('=', absl::StrFormat("after instruction name '%s'", name)));
  Shape shape;
  HLO_RETURN_IF_ERROR(ParseShapeAt(lx_, &shape, 0));
  std::string opcode_text;
  HLO_RETURN_IF_ERROR(lx_.ReadName(&opcode_text, "an opcode"));
  Opcode opcode = OpcodeFromName(opcode_text);
  auto inst = std::make_unique<Instruction>(opcode, name, std::move(shape));
  inst->set_opcode_text(opcode_text);
  inst->set_line(src_->Line(start));

  PendingInstruction p;
  p.inst = inst.get();
  if (opcode == Opcode::kConstant) {
    size_t b, e;
    HLO_RETURN_IF_ERROR(lx_.CaptureBalanced('(', ')', &b, &e));
    Literal literal;
    HLO_RETURN_IF_ERROR(LiteralValue(b, e, inst->shape(), &literal));
    inst->attrs().literal = std::move(literal);
  } else if (opcode == Opcode::kParameter) {
    HLO_RETURN_IF_ERROR(lx_.Expect('(', "after 'parameter'"));
    size_t num_pos = (lx_.SkipTrivia(), lx_.pos());
    int64_t number;
    HLO_RETURN_IF_ERROR(lx_.ReadInt(&number, "a parameter number"));
    if (number < 0) return src_->Error(num_pos, "parameter numbers cannot be negative");
    inst->attrs().parameter_number = number;
    HLO_RETURN_IF_ERROR(lx_.Expect(')', "after the parameter number"));
  } else {
    if (lx_.Peek() != '(') {
      return lx_.ErrorHere(absl::StrFormat("expected '(' after opcode '%s'", opcode_text));
    }
    HLO_RETURN_IF_ERROR(ParseOperands(&p));
  }
  while (lx_.TryConsume(',')) {
    HLO_RETURN_IF_ERROR(ParseAttribute(&p));
  }
  comp->AddInstruction(std::move(inst));
  pending->push_back(std::move(p));
  return absl::OkStatus();
}

absl::Status Parser::ParseOperands(PendingInstruction* p) {
  HLO_RETURN_IF_ERROR(lx_.Expect('(', "to open the operand list"));
  if (lx_.TryConsume(')')) return absl::OkStatus();
  while (true) {
    size_t pos = (lx_.SkipTrivia(), lx_.pos());
    // Long form: each operand carries its shape ("f32[2]{0} %x").
    if (lx_.Peek() == '(') {
      Shape ignored;
      HLO_RETURN_IF_ERROR(ParseShapeAt(lx_, &ignored, 0));
      pos = (lx_.SkipTrivia(), lx_.pos());
    }
    std::string name;
    HLO_RETURN_IF_ERROR(lx_.ReadName(&name, "an operand name"));
    if (lx_.PeekRaw() == '[' && ElementTypeFromName(name)) {
      lx_.set_pos(pos);
      Shape ignored;
      HLO_RETURN_IF_ERROR(ParseShapeAt(lx_, &ignored, 0));
      pos = (lx_.SkipTrivia(), lx_.pos());
      HLO_RETURN_IF_ERROR(lx_.ReadName(&name, "an operand name after its shape"));
    }
    p->operands.push_back({name, pos});
    if (lx_.TryConsume(')')) return absl::OkStatus();
    HLO_RETURN_IF_ERROR(lx_.Expect(',', "between operands"));
  }
}

std::string Parser::TextOrString(size_t b, size_t e) {
  Lexer inner(src_, b, e);
  std::string s;
  if (inner.Peek() == '"' && inner.ReadString(&s, "").ok() && inner.AtEnd()) return s;
  return std::string(lx_.Slice(b, e));
}

absl::Status Parser::IntValue(size_t b, size_t e, int64_t* out) {
  Lexer inner(src_, b, e);
  HLO_RETURN_IF_ERROR(inner.ReadInt(out, "an integer"));
  return ExpectEnd(inner, "an integer value");
}

absl::Status Parser::BoolValue(size_t b, size_t e, bool* out) {
  std::string_view v = lx_.Slice(b, e);
  if (v == "true" || v == "1") {
    *out = true;
  } else if (v == "false" || v == "0") {
    *out = false;
  } else {
    return src_->Error(b, absl::StrFormat("expected true or false, found '%s'", v));
  }
  return absl::OkStatus();
}

absl::Status Parser::WordValue(size_t b, size_t e, std::string* out) {
  *out = TextOrString(b, e);
  return absl::OkStatus();
}

absl::Status Parser::IntList(size_t b, size_t e, std::vector<int64_t>* out) {
  Lexer inner(src_, b, e);
  out->clear();
  HLO_RETURN_IF_ERROR(inner.Expect('{', "to open a list of integers"));
  if (!inner.TryConsume('}')) {
    while (true) {
      int64_t v;
      HLO_RETURN_IF_ERROR(inner.ReadInt(&v, "an integer"));
      out->push_back(v);
      if (inner.TryConsume('}')) break;
      HLO_RETURN_IF_ERROR(inner.Expect(',', "between integers"));
    }
  }
  return ExpectEnd(inner, "a list of integers");
}

absl::Status Parser::NameList(size_t b, size_t e, std::vector<PendingName>* out) {
  Lexer inner(src_, b, e);
  bool braced = inner.TryConsume('{');
  if (braced && inner.TryConsume('}')) return ExpectEnd(inner, "a list of names");
  while (true) {
    size_t pos = (inner.SkipTrivia(), inner.pos());
    std::string name;
    HLO_RETURN_IF_ERROR(inner.ReadName(&name, "a name"));
    out->push_back({name, pos});
    if (!braced) break;
    if (inner.TryConsume('}')) break;
    HLO_RETURN_IF_ERROR(inner.Expect(',', "between names"));
  }
  return ExpectEnd(inner, "a list of names");
}

absl::Status Parser::SliceValue(size_t b, size_t e, std::vector<SliceDim>* out) {
  Lexer inner(src_, b, e);
  HLO_RETURN_IF_ERROR(inner.Expect('{', "to open slice={...}"));
  if (!inner.TryConsume('}')) {
    while (true) {
      SliceDim d;
      HLO_RETURN_IF_ERROR(inner.Expect('[', "to open a slice range [start:limit:stride]"));
      HLO_RETURN_IF_ERROR(inner.ReadInt(&d.start, "a slice start"));
      HLO_RETURN_IF_ERROR(inner.Expect(':', "after the slice start"));
      HLO_RETURN_IF_ERROR(inner.ReadInt(&d.limit, "a slice limit"));
      if (inner.TryConsume(':')) HLO_RETURN_IF_ERROR(inner.ReadInt(&d.stride, "a slice stride"));
      HLO_RETURN_IF_ERROR(inner.Expect(']', "to close a slice range"));
      out->push_back(d);
      if (inner.TryConsume('}')) break;
      HLO_RETURN_IF_ERROR(inner.Expect(',', "between slice ranges"));
    }
  }
  return ExpectEnd(inner, "slice={...}");
}

absl::Status Parser::PaddingValue(size_t b, size_t e, std::vector<PaddingDim>* out) {
  std::string_view text = lx_.Slice(b, e);
  for (std::string_view piece : SplitX(text)) {
    std::vector<std::string_view> parts =
        Split(piece, '_');
    PaddingDim d;
    bool ok = (parts.size() == 2 || parts.size() == 3) && ParseI64(parts[0], &d.low) &&
              ParseI64(parts[1], &d.high) && (parts.size() == 2 || ParseI64(parts[2], &d.interior));
    if (!ok) {
      return src_->Error(b, absl::StrFormat(
          "padding '%s' is not low_high[_interior] per dimension, joined by 'x'", text));
    }
    out->push_back(d);
  }
  return absl::OkStatus();
}

absl::Status Parser::WindowValue(size_t b, size_t e, std::vector<WindowDim>* out) {
  Lexer inner(src_, b, e);
  HLO_RETURN_IF_ERROR(inner.Expect('{', "to open window={...}"));
  size_t body_b, body_e;
  inner.set_pos(b);
  HLO_RETURN_IF_ERROR(inner.CaptureBalanced('{', '}', &body_b, &body_e));
  HLO_RETURN_IF_ERROR(ExpectEnd(inner, "window={...}"));
  std::string_view body = lx_.Slice(body_b, body_e);
  std::vector<std::string_view> fields =
      Split(body, ' ', true);
  auto error = [&](std::string_view why) {
    return src_->Error(body_b, absl::StrFormat("window {%s}: %s", body, why));
  };
  // size= fixes the number of dimensions; it may come after other fields.
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> parsed;
  size_t rank = 0;
  bool have_size = false;
  for (std::string_view field : fields) {
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) return error(absl::StrFormat("'%s' is not key=value", field));
    std::string_view key = field.substr(0, eq);
    std::vector<std::string_view> values = SplitX(field.substr(eq + 1));
    if (key == "size") {
      rank = values.size();
      have_size = true;
    }
    parsed.emplace_back(key, std::move(values));
  }
  if (!have_size) {
    if (fields.empty()) return absl::OkStatus();  // window={} : no dimensions
    return error("missing size=");
  }
  out->assign(rank, WindowDim{});
  for (const auto& [key, values] : parsed) {
    if (values.size() != rank) {
      return error(absl::StrFormat("%s has %d values but size has %d", key, values.size(), rank));
    }
    for (size_t i = 0; i < rank; ++i) {
      WindowDim& d = (*out)[i];
      bool ok = true;
      if (key == "size") {
        ok = ParseI64(values[i], &d.size);
      } else if (key == "stride") {
        ok = ParseI64(values[i], &d.stride);
      } else if (key == "pad") {
        std::vector<std::string_view> lh =
            Split(values[i], '_');
        ok = lh.size() == 2 && ParseI64(lh[0], &d.pad_low) && ParseI64(lh[1], &d.pad_high);
      } else if (key == "lhs_dilate") {
        ok = ParseI64(values[i], &d.base_dilation);
      } else if (key == "rhs_dilate") {
        ok = ParseI64(values[i], &d.window_dilation);
      } else if (key == "rhs_reversal") {
        int64_t r = 0;
        ok = ParseI64(values[i], &r);
        d.reversal = r != 0;
      } else {
        return error(absl::StrFormat("unknown window field '%s'", key));
      }
      if (!ok) return error(absl::StrFormat("bad value '%s' for %s", values[i], key));
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::DimLabels(size_t b, size_t e, ConvDims* out) {
  std::string_view text = lx_.Slice(b, e);
  auto error = [&](std::string_view why) {
    return src_->Error(b, absl::StrFormat("dim_labels '%s': %s", text, why));
  };
  size_t us = text.find('_'), arrow = text.find("->");
  if (us == std::string_view::npos || arrow == std::string_view::npos || arrow < us) {
    return error("expected the form lhs_rhs->out, e.g. b01f_01io->b01f");
  }
  std::string_view lhs = text.substr(0, us), rhs = text.substr(us + 1, arrow - us - 1),
                   res = text.substr(arrow + 2);
  size_t spatial = lhs.size() >= 2 ? lhs.size() - 2 : 0;
  if (lhs.size() < 2 || rhs.size() != lhs.size() || res.size() != lhs.size()) {
    return error("the three parts must have the same number of labels");
  }
  ConvDims d;
  d.input_spatial.assign(spatial, -1);
  d.kernel_spatial.assign(spatial, -1);
  d.output_spatial.assign(spatial, -1);
  auto assign = [&](std::string_view part, char a, char b2, int64_t* da, int64_t* db,
                    std::vector<int64_t>* sp) -> bool {
    bool seen_a = false, seen_b = false;
    for (size_t i = 0; i < part.size(); ++i) {
      char c = part[i];
      if (c == a && !seen_a) {
        *da = static_cast<int64_t>(i);
        seen_a = true;
      } else if (c == b2 && !seen_b) {
        *db = static_cast<int64_t>(i);
        seen_b = true;
      } else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < spatial &&
                 (*sp)[c - '0'] < 0) {
        (*sp)[c - '0'] = static_cast<int64_t>(i);
      } else {
        return false;
      }
    }
    return seen_a && seen_b;
  };
  if (!assign(lhs, 'b', 'f', &d.input_batch, &d.input_feature, &d.input_spatial) ||
      !assign(rhs, 'i', 'o', &d.kernel_input_feature, &d.kernel_output_feature, &d.kernel_spatial) ||
      !assign(res, 'b', 'f', &d.output_batch, &d.output_feature, &d.output_spatial)) {
    return error("each part needs b/f (i/o for the kernel) once and spatial digits 0..n-1 once");
  }
  *out = std::move(d);
  return absl::OkStatus();
}

absl::Status Parser::ReplicaGroups(size_t b, size_t e, std::vector<std::vector<int64_t>>* out) {
  Lexer inner(src_, b, e);
  out->clear();
  std::string_view text = lx_.Slice(b, e);
  if (text.substr(0, 5) == "mesh[") return MeshReplicaGroups(b, e, out);
  if (inner.Peek() == '[') {
    // Iota form: [groups,size]<=[reshape dims]T(perm)
    std::vector<int64_t> group_dims, reshape, perm;
    auto read_list = [&](char open, char close, std::vector<int64_t>* v) -> absl::Status {
      HLO_RETURN_IF_ERROR(inner.Expect(open, "in replica_groups"));
      while (true) {
        int64_t x;
        HLO_RETURN_IF_ERROR(inner.ReadInt(&x, "an integer in replica_groups"));
        v->push_back(x);
        if (inner.TryConsume(close)) return absl::OkStatus();
        HLO_RETURN_IF_ERROR(inner.Expect(',', "in replica_groups"));
      }
    };
    HLO_RETURN_IF_ERROR(read_list('[', ']', &group_dims));
    HLO_RETURN_IF_ERROR(inner.Expect('<', "in replica_groups iota form [G,S]<=[N]"));
    HLO_RETURN_IF_ERROR(inner.Expect('=', "in replica_groups iota form [G,S]<=[N]"));
    HLO_RETURN_IF_ERROR(read_list('[', ']', &reshape));
    if (inner.TryConsume('T')) HLO_RETURN_IF_ERROR(read_list('(', ')', &perm));
    HLO_RETURN_IF_ERROR(ExpectEnd(inner, "replica_groups"));
    int64_t total = 1;
    for (int64_t d : reshape) {
      if (d <= 0 || total > (int64_t{1} << 20) / d) {
        return src_->Error(b, "replica_groups iota form has a bad or too large size");
      }
      total *= d;
    }
    if (group_dims.size() != 2 || group_dims[0] <= 0 || group_dims[1] <= 0 ||
        group_dims[0] > total || group_dims[0] * group_dims[1] != total) {
      return src_->Error(b, "replica_groups [G,S] must multiply to the iota size");
    }
    HLO_RETURN_IF_ERROR(SpendDeviceIds(b, total));
    if (perm.empty()) {
      for (size_t i = 0; i < reshape.size(); ++i) perm.push_back(static_cast<int64_t>(i));
    }
    std::vector<bool> seen(reshape.size(), false);
    if (perm.size() != reshape.size()) return src_->Error(b, "replica_groups T(...) has the wrong length");
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(reshape.size()) || seen[p]) {
        return src_->Error(b, "replica_groups T(...) is not a permutation");
      }
      seen[p] = true;
    }
    // Element at transposed index t maps back to the iota value.
    std::vector<int64_t> strides(reshape.size(), 1);
    for (int i = static_cast<int>(reshape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * reshape[i + 1];
    std::vector<int64_t> index(reshape.size(), 0);
    std::vector<int64_t> flat;
    flat.reserve(total);
    for (int64_t n = 0; n < total; ++n) {
      int64_t v = 0;
      for (size_t k = 0; k < perm.size(); ++k) v += index[k] * strides[perm[k]];
      flat.push_back(v);
      for (int k = static_cast<int>(perm.size()) - 1; k >= 0; --k) {
        if (++index[k] < reshape[perm[k]]) break;
        index[k] = 0;
      }
    }
    for (int64_t g = 0; g < group_dims[0]; ++g) {
      out->emplace_back(flat.begin() + g * group_dims[1], flat.begin() + (g + 1) * group_dims[1]);
    }
    return absl::OkStatus();
  }
  HLO_RETURN_IF_ERROR(inner.Expect('{', "to open replica_groups"));
  if (!inner.TryConsume('}')) {
    while (true) {
      std::vector<int64_t> group;
      HLO_RETURN_IF_ERROR(inner.Expect('{', "to open a replica group"));
      if (!inner.TryConsume('}')) {
        while (true) {
          int64_t v;
          HLO_RETURN_IF_ERROR(inner.ReadInt(&v, "a replica id"));
          group.push_back(v);
          if (inner.TryConsume('}')) break;
          HLO_RETURN_IF_ERROR(inner.Expect(',', "between replica ids"));
        }
      }
      out->push_back(std::move(group));
      if (inner.TryConsume('}')) break;
      HLO_RETURN_IF_ERROR(inner.Expect(',', "between replica groups"));
    }
  }
  return ExpectEnd(inner, "replica_groups");
}

// mesh['x'=2,'y'=2] {'y'}: devices numbered row-major over the mesh; each
// group varies the listed axes with the others fixed.
absl::Status Parser::MeshReplicaGroups(size_t b, size_t e, std::vector<std::vector<int64_t>>* out) {
  std::string_view text = lx_.Slice(b, e);
  auto error = [&]() {
    return src_->Error(b, absl::StrFormat("replica_groups '%s' is not of the form "
                                          "mesh['a'=N,...] {'a',...}", text));
  };
  size_t close = text.find(']');
  size_t open = text.find('{', close == std::string_view::npos ? 0 : close);
  if (close == std::string_view::npos || open == std::string_view::npos || text.back() != '}') {
    return error();
  }
  std::vector<std::string_view> names;
  std::vector<int64_t> sizes;
  for (std::string_view axis : Split(text.substr(5, close - 5), ',', true)) {
    size_t eq = axis.find('=');
    int64_t n;
    if (eq == std::string_view::npos || !ParseI64(axis.substr(eq + 1), &n) || n <= 0 || n > 4096) {
      return error();
    }
    names.push_back(axis.substr(0, eq));
    sizes.push_back(n);
  }
  std::vector<bool> grouped(names.size(), false);
  for (std::string_view axis :
       Split(text.substr(open + 1, text.size() - open - 2), ',', true)) {
    while (!axis.empty() && axis.front() == ' ') axis.remove_prefix(1);
    auto it = std::find(names.begin(), names.end(), axis);
    if (it == names.end()) return error();
    grouped[it - names.begin()] = true;
  }
  int64_t total = 1;
  for (int64_t n : sizes) {
    total *= n;
    if (total > (int64_t{1} << 20)) return error();
  }
  HLO_RETURN_IF_ERROR(SpendDeviceIds(b, total));
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;  // key: fixed coordinates
  for (int64_t device = 0; device < total; ++device) {
    std::vector<int64_t> key;
    int64_t rest = device;
    for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
      if (!grouped[i]) key.push_back(rest % sizes[i]);
      rest /= sizes[i];
    }
    groups[key].push_back(device);
  }
  for (auto& [key, devices] : groups) out->push_back(std::move(devices));
  std::sort(out->begin(), out->end());
  return absl::OkStatus();
}

absl::Status Parser::PairList(size_t b, size_t e, std::vector<std::pair<int64_t, int64_t>>* out) {
  Lexer inner(src_, b, e);
  HLO_RETURN_IF_ERROR(inner.Expect('{', "to open source_target_pairs"));
  if (!inner.TryConsume('}')) {
    while (true) {
      std::pair<int64_t, int64_t> pair;
      HLO_RETURN_IF_ERROR(inner.Expect('{', "to open a {source,target} pair"));
      HLO_RETURN_IF_ERROR(inner.ReadInt(&pair.first, "a source"));
      HLO_RETURN_IF_ERROR(inner.Expect(',', "in a {source,target} pair"));
      HLO_RETURN_IF_ERROR(inner.ReadInt(&pair.second, "a target"));
      HLO_RETURN_IF_ERROR(inner.Expect('}', "to close a {source,target} pair"));
      out->push_back(pair);
      if (inner.TryConsume('}')) break;
      HLO_RETURN_IF_ERROR(inner.Expect(',', "between pairs"));
    }
  }
  return ExpectEnd(inner, "source_target_pairs");
}

absl::Status Parser::KeyValueList(size_t b, size_t e,
                                  std::vector<std::pair<std::string, std::string>>* out) {
  Lexer inner(src_, b, e);
  HLO_RETURN_IF_ERROR(inner.Expect('{', "to open the attribute list"));
  while (!inner.TryConsume('}')) {
    if (inner.AtEnd()) return inner.ErrorHere("attribute list is never closed");
    std::string key;
    if (inner.Peek() == '"') {
      HLO_RETURN_IF_ERROR(inner.ReadString(&key, "a key"));
    } else {
      HLO_RETURN_IF_ERROR(inner.ReadName(&key, "a key"));
    }
    HLO_RETURN_IF_ERROR(inner.Expect('=', absl::StrFormat("after key '%s'", key)));
    size_t vb, ve;
    HLO_RETURN_IF_ERROR(inner.CaptureValue(&vb, &ve));
    out->emplace_back(key, TextOrString(vb, ve));
    inner.TryConsume(',');
  }
  return ExpectEnd(inner, "the attribute list");
}

absl::Status Parser::MetadataValue(size_t b, size_t e, Metadata* out) {
  std::vector<std::pair<std::string, std::string>> fields;
  HLO_RETURN_IF_ERROR(KeyValueList(b, e, &fields));
  for (const auto& [key, value] : fields) {
    if (key == "op_type") {
      out->op_type = value;
    } else if (key == "op_name") {
      out->op_name = value;
    } else if (key == "source_file") {
      out->source_file = value;
    } else if (key == "source_line") {
      if (!ParseI64(value, &out->source_line)) {
        return src_->Error(b, absl::StrFormat("metadata source_line '%s' is not a number", value));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::LiteralValue(size_t b, size_t e, const Shape& shape, Literal* out) {
  Lexer inner(src_, b, e);
  // Old printers repeat the shape inside: constant(f32[2] {1, 2}).
  size_t save = (inner.SkipTrivia(), inner.pos());
  std::string word;
  if (inner.ReadName(&word, "").ok() && ElementTypeFromName(word) && inner.PeekRaw() == '[') {
    inner.set_pos(save);
    Shape ignored;
    HLO_RETURN_IF_ERROR(ParseShapeAt(inner, &ignored, 0));
  } else {
    inner.set_pos(save);
  }
  LiteralParser parser(inner);
  HLO_RETURN_IF_ERROR(parser.Parse(shape, out, 0));
  return ExpectEnd(inner, "the constant's value");
}

absl::Status Parser::ParseAttribute(PendingInstruction* p) {
  Instruction* inst = p->inst;
  Attributes& a = inst->attrs();
  std::string key;
  HLO_RETURN_IF_ERROR(lx_.ReadName(&key, "an attribute name"));
  HLO_RETURN_IF_ERROR(lx_.Expect('=', absl::StrFormat("after attribute '%s'", key)));
  size_t b, e;
  HLO_RETURN_IF_ERROR(lx_.CaptureValue(&b, &e, /*spaces_inside=*/true));
  Opcode op = inst->opcode();
  auto dot = [&]() -> DotDims& {
    if (!a.dot) a.dot.emplace();
    return *a.dot;
  };
  auto gather = [&]() -> GatherDims& {
    if (!a.gather) a.gather.emplace();
    return *a.gather;
  };
  auto scatter = [&]() -> ScatterDims& {
    if (!a.scatter) a.scatter.emplace();
    return *a.scatter;
  };
  bool is_scatter = op == Opcode::kScatter;

  if (key == "dimensions") {
    a.has_dimensions = true;
    return IntList(b, e, &a.dimensions);
  }
  if (key == "index") return IntValue(b, e, &a.tuple_index);
  if (key == "iota_dimension") return IntValue(b, e, &a.iota_dimension);
  if (key == "slice") return SliceValue(b, e, &a.slice);
  if (key == "dynamic_slice_sizes") return IntList(b, e, &a.dynamic_slice_sizes);
  if (key == "padding" && op == Opcode::kPad) {
    a.has_padding = true;
    return PaddingValue(b, e, &a.padding);
  }
  if (key == "lhs_contracting_dims") return IntList(b, e, &dot().lhs_contracting);
  if (key == "rhs_contracting_dims") return IntList(b, e, &dot().rhs_contracting);
  if (key == "lhs_batch_dims") return IntList(b, e, &dot().lhs_batch);
  if (key == "rhs_batch_dims") return IntList(b, e, &dot().rhs_batch);
  if (key == "lhs_ragged_dims") return IntList(b, e, &dot().lhs_ragged);
  if (key == "rhs_group_dims") return IntList(b, e, &dot().rhs_group);
  if (key == "operand_precision") {
    std::vector<PendingName> names;
    HLO_RETURN_IF_ERROR(NameList(b, e, &names));
    for (auto& n : names) a.operand_precision.push_back(n.name);
    return absl::OkStatus();
  }
  if (key == "window") {
    a.has_window = true;
    return WindowValue(b, e, &a.window);
  }
  if (key == "dim_labels") {
    ConvDims d;
    HLO_RETURN_IF_ERROR(DimLabels(b, e, &d));
    a.conv = std::move(d);
    return absl::OkStatus();
  }
  if (key == "feature_group_count") return IntValue(b, e, &a.feature_group_count);
  if (key == "batch_group_count") return IntValue(b, e, &a.batch_group_count);
  if (key == "offset_dims") return IntList(b, e, &gather().offset_dims);
  if (key == "collapsed_slice_dims") return IntList(b, e, &gather().collapsed_slice_dims);
  if (key == "start_index_map") return IntList(b, e, &gather().start_index_map);
  if (key == "operand_batching_dims") return IntList(b, e, &gather().operand_batching_dims);
  if (key == "start_indices_batching_dims") {
    return IntList(b, e, &gather().start_indices_batching_dims);
  }
  if (key == "slice_sizes") return IntList(b, e, &a.gather_slice_sizes);
  if (key == "update_window_dims") return IntList(b, e, &scatter().update_window_dims);
  if (key == "inserted_window_dims") return IntList(b, e, &scatter().inserted_window_dims);
  if (key == "scatter_dims_to_operand_dims") {
    return IntList(b, e, &scatter().scatter_dims_to_operand_dims);
  }
  if (key == "input_batching_dims") return IntList(b, e, &scatter().input_batching_dims);
  if (key == "scatter_indices_batching_dims") {
    return IntList(b, e, &scatter().scatter_indices_batching_dims);
  }
  if (key == "index_vector_dim") {
    return IntValue(b, e, is_scatter ? &scatter().index_vector_dim : &gather().index_vector_dim);
  }
  if (key == "indices_are_sorted") return BoolValue(b, e, &a.indices_are_sorted);
  if (key == "unique_indices") return BoolValue(b, e, &a.unique_indices);
  if (key == "direction") {
    std::string_view v = lx_.Slice(b, e);
    a.comparison_direction = ComparisonDirectionFromName(v);
    if (!a.comparison_direction) {
      return src_->Error(b, absl::StrFormat("unknown comparison direction '%s'", v));
    }
    return absl::OkStatus();
  }
  if (key == "type" && op == Opcode::kCompare) return WordValue(b, e, &a.comparison_type);
  if (key == "replica_groups") {
    a.has_replica_groups = true;
    return ReplicaGroups(b, e, &a.replica_groups);
  }
  if (key == "channel_id") {
    int64_t id;
    HLO_RETURN_IF_ERROR(IntValue(b, e, &id));
    a.channel_id = id;
    return absl::OkStatus();
  }
  if (key == "use_global_device_ids") return BoolValue(b, e, &a.use_global_device_ids);
  if (key == "constrain_layout") return BoolValue(b, e, &a.constrain_layout);
  if (key == "source_target_pairs") return PairList(b, e, &a.source_target_pairs);
  if (key == "custom_call_target") return WordValue(b, e, &a.custom_call_target);
  if (key == "backend_config") return WordValue(b, e, &a.backend_config);
  if (key == "api_version") return WordValue(b, e, &a.api_version);
  if (key == "custom_call_has_side_effect") return BoolValue(b, e, &a.custom_call_has_side_effect);
  if (key == "kind" && op == Opcode::kFusion) return WordValue(b, e, &a.fusion_kind);
  if (key == "exponent_bits") return IntValue(b, e, &a.exponent_bits);
  if (key == "mantissa_bits") return IntValue(b, e, &a.mantissa_bits);
  if (key == "is_stable") return BoolValue(b, e, &a.is_stable);
  if (key == "epsilon") {
    std::string v(lx_.Slice(b, e));
    char* end = nullptr;
    a.epsilon = std::strtof(v.c_str(), &end);
    if (end != v.c_str() + v.size()) {
      return src_->Error(b, absl::StrFormat("epsilon '%s' is not a number", v));
    }
    return absl::OkStatus();
  }
  if (key == "feature_index") return IntValue(b, e, &a.feature_index);
  if (key == "distribution") return WordValue(b, e, &a.distribution);
  if (key == "algorithm" && op == Opcode::kRngBitGenerator) return WordValue(b, e, &a.rng_algorithm);
  if (key == "fft_type") return WordValue(b, e, &a.fft_type);
  if (key == "fft_length") return IntList(b, e, &a.fft_length);
  if (key == "k" && op == Opcode::kTopK) return IntValue(b, e, &a.k);
  if (key == "largest" && (op == Opcode::kTopK || op == Opcode::kCustomCall)) return BoolValue(b, e, &a.largest);
  if (key == "is_host_transfer") return BoolValue(b, e, &a.is_host_transfer);
  if (op == Opcode::kCholesky || op == Opcode::kTriangularSolve) {
    if (key == "lower") return BoolValue(b, e, &a.lower);
  }
  if (op == Opcode::kTriangularSolve) {
    if (key == "left_side") return BoolValue(b, e, &a.left_side);
    if (key == "unit_diagonal") return BoolValue(b, e, &a.unit_diagonal);
    if (key == "transpose_a") {
      std::string_view v = lx_.Slice(b, e);
      if (v != "NO_TRANSPOSE" && v != "TRANSPOSE" && v != "ADJOINT") {
        return src_->Error(b, absl::StrFormat(
            "transpose_a '%s' is not NO_TRANSPOSE, TRANSPOSE or ADJOINT", v));
      }
      a.transpose_a = std::string(v);
      return absl::OkStatus();
    }
  }
  if (key == "metadata") return MetadataValue(b, e, &a.metadata);
  if (key == "sharding") {
    std::string_view v = lx_.Slice(b, e);
    if (v.size() >= 2 && v.front() == '{' && v.back() == '}') v = v.substr(1, v.size() - 2);
    a.sharding = std::string(v);
    return absl::OkStatus();
  }
  if (key == "frontend_attributes") return KeyValueList(b, e, &a.frontend_attributes);
  if (key == "control-predecessors") return NameList(b, e, &p->control_predecessors);
  if (key == "to_apply" || key == "calls" || key == "condition" || key == "body" ||
      key == "branch_computations" || key == "true_computation" ||
      key == "false_computation" || key == "called_computations" ||
      (op == Opcode::kSelectAndScatter && (key == "select" || key == "scatter"))) {
    std::vector<PendingName> names;
    HLO_RETURN_IF_ERROR(NameList(b, e, &names));
    p->calls.emplace_back(key, std::move(names));
    return absl::OkStatus();
  }
  a.other.emplace_back(key, std::string(lx_.Slice(b, e)));
  return absl::OkStatus();
}

absl::Status Parser::ResolveCalls(Module* module) {
  for (PendingInstruction& p : all_calls_) {
    Instruction* inst = p.inst;
    auto lookup = [&](const PendingName& n, Computation** out) -> absl::Status {
      *out = module->Find(n.name);
      if (!*out) {
        return src_->Error(n.offset, absl::StrFormat(
            "instruction '%s' calls computation '%s', which the module does not define",
            inst->name(), n.name));
      }
      return absl::OkStatus();
    };
    // Put callees in XLA's role order regardless of attribute order.
    std::vector<std::string_view> order;
    switch (inst->opcode()) {
      case Opcode::kWhile: order = {"body", "condition"}; break;
      case Opcode::kConditional:
        order = {"true_computation", "false_computation", "branch_computations"};
        break;
      case Opcode::kSelectAndScatter: order = {"select", "scatter"}; break;
      default: break;
    }
    std::vector<Computation*> called;
    auto take = [&](const std::vector<PendingName>& names) -> absl::Status {
      for (const PendingName& n : names) {
        Computation* c;
        HLO_RETURN_IF_ERROR(lookup(n, &c));
        called.push_back(c);
      }
      return absl::OkStatus();
    };
    if (order.empty()) {
      for (auto& [role, names] : p.calls) HLO_RETURN_IF_ERROR(take(names));
    } else {
      for (std::string_view role : order) {
        for (auto& [r, names] : p.calls) {
          if (r == role) HLO_RETURN_IF_ERROR(take(names));
        }
      }
    }
    inst->set_called_computations(std::move(called));
    if (inst->opcode() == Opcode::kFusion) {
      for (Computation* c : inst->called_computations()) c->set_is_fusion_computation(true);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ParseText(std::string_view text,
                                                  std::string_view display_name) {
  SourceMap source(display_name, text);
  Parser parser(&source);
  return parser.ParseModule();
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  SourceMap source("shape", text);
  Lexer lx(&source);
  Shape shape;
  HLO_RETURN_IF_ERROR(ParseShapeAt(lx, &shape, 0));
  if (!lx.AtEnd()) return lx.ErrorHere("unexpected text after the shape");
  return shape;
}

absl::StatusOr<Literal> ParseLiteral(std::string_view text, const Shape& shape) {
  SourceMap source("literal", text);
  Lexer lx(&source);
  Literal literal;
  LiteralParser parser(lx);
  HLO_RETURN_IF_ERROR(parser.Parse(shape, &literal, 0));
  if (!lx.AtEnd()) return lx.ErrorHere("unexpected text after the literal");
  return literal;
}

}  // namespace neuron::hlo
