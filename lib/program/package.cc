#include "lib/program/package.h"

#include <nlohmann/json.hpp>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/hlo/printer.h"
#include "lib/hlo/proto/hlo.pb.h"
#include "lib/hlo/proto_reader.h"
#include "lib/program/dtype.h"
#include "lib/program/npy.h"
#include "lib/support/npy.h"
#include "lib/program/proto_writer.h"

namespace neuron::program {
namespace {

// Stand-in opcode for member-held constants while the proto is converted
// (the reader needs a literal for `constant`); replaced right after.
constexpr char kPlaceholderOpcode[] = "neuron-external-constant";

bool IsMemberConstant(const hlo::Instruction& inst) {
  if (inst.opcode() != hlo::Opcode::kConstant || !inst.attrs().literal) return false;
  const hlo::Literal& lit = *inst.attrs().literal;
  if (!lit.shape().IsArray() || lit.elided()) return false;
  return static_cast<int64_t>(lit.data().size()) > kInlineConstantLimit;
}

std::string SourceMapJson(const hlo::Module& module) {
  nlohmann::json map = nlohmann::json::object();
  for (const hlo::Computation* c : module.computations()) {
    for (const hlo::Instruction* inst : c->instructions()) {
      const hlo::Metadata& md = inst->attrs().metadata;
      if (md.empty()) continue;
      nlohmann::json e = {{"computation", c->name()}};
      if (!md.op_name.empty()) e["op_name"] = md.op_name;
      if (!md.op_type.empty()) e["op_type"] = md.op_type;
      if (!md.source_file.empty()) e["source_file"] = md.source_file;
      if (md.source_line) e["source_line"] = md.source_line;
      map[inst->name()] = std::move(e);
    }
  }
  return map.dump(1) + "\n";
}

absl::Status MemberError(std::string_view member, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("NEFF member '%s': %s", member, what));
}

}  // namespace

absl::StatusOr<std::vector<neff::Member>> Serialize(const SerializeInput& input,
                                                    std::deque<std::string>* storage) {
  if (!input.module) return absl::InvalidArgumentError("Serialize: no module");
  Manifest manifest = input.manifest;
  manifest.constants.clear();
  std::vector<neff::Member> members;
  std::unordered_map<const hlo::Instruction*, std::string> member_of;
  std::vector<neff::Member> constant_members;
  for (const hlo::Computation* c : input.module->PostOrder()) {
    for (const hlo::Instruction* inst : c->instructions()) {
      if (!IsMemberConstant(*inst)) continue;
      const hlo::Literal& lit = *inst->attrs().literal;
      std::string member = absl::StrCat("constants/", manifest.constants.size(), ".npy");
      std::string& bytes = storage->emplace_back(
          npy::Header(NpyDescr(lit.shape().type), lit.shape().dims,
                    input.page_align_constants ? neff::kFastLoadingAlignment : 64));
      bytes.append(reinterpret_cast<const char*>(lit.data().data()), lit.data().size());
      ConstantInfo info;
      info.name = inst->name();
      info.member = member;
      info.type = lit.shape().type;
      info.dims = lit.shape().dims;
      info.size = static_cast<int64_t>(lit.data().size());
      manifest.constants.push_back(info);
      member_of[inst] = member;
      constant_members.push_back({member, bytes, false});
    }
  }
  ProtoWriteOptions options;
  options.external_member = [&](const hlo::Instruction& inst) {
    auto it = member_of.find(&inst);
    return it == member_of.end() ? std::string() : it->second;
  };
  absl::StatusOr<std::string> program = WriteModuleProto(*input.module, options);
  if (!program.ok()) return program.status();

  members.push_back({kManifestMember, storage->emplace_back(ManifestToJson(manifest)), false});
  members.push_back({kProgramMember, storage->emplace_back(std::move(*program)), false});
  if (!constant_members.empty()) members.push_back({"constants", {}, true});
  for (neff::Member& m : constant_members) members.push_back(std::move(m));
  members.push_back({"debug", {}, true});
  members.push_back({kInputHloMember, storage->emplace_back(input.input_hlo_text), false});
  members.push_back({kSourceMapMember, storage->emplace_back(SourceMapJson(*input.module)), false});
  if (!input.passes_json.empty()) {
    members.push_back({"compile", {}, true});
    members.push_back({kPassesMember, storage->emplace_back(input.passes_json), false});
  }
  return members;
}

absl::StatusOr<Manifest> ReadManifest(const neff::Package& neff) {
  const neff::Entry* entry = neff.Find(kManifestMember);
  if (!entry) return absl::InvalidArgumentError("NEFF has no neff.json member (not a neuron-tools NEFF)");
  return ManifestFromJson(entry->data);
}

absl::StatusOr<Package> Deserialize(const neff::Package& neff) {
  Package package;
  absl::StatusOr<Manifest> manifest = ReadManifest(neff);
  if (!manifest.ok()) return manifest.status();
  package.manifest = std::move(*manifest);
  const std::string& program_name = package.manifest.program;
  const neff::Entry* program = neff.Find(program_name);
  if (!program) return MemberError(program_name, "missing (neff.json names it as the program)");

  xla::HloModuleProtoWithConfig proto;
  if (program->data.size() > INT32_MAX ||
      !proto.ParseFromArray(program->data.data(), static_cast<int>(program->data.size())) ||
      proto.hlo_module().computations_size() == 0) {
    return MemberError(program_name, "not a valid HloModuleProtoWithConfig");
  }
  // Member-held constants: note their members and swap in the placeholder.
  std::unordered_map<std::string, std::string> member_of;  // instruction -> member
  for (auto& comp : *proto.mutable_hlo_module()->mutable_computations()) {
    for (auto& inst : *comp.mutable_instructions()) {
      auto* map = inst.mutable_frontend_attributes()->mutable_map();
      for (int i = 0; i < map->size(); ++i) {
        if (map->Get(i).key() != kExternalConstantAttribute) continue;
        if (inst.opcode() != "constant") {
          return MemberError(program_name, absl::StrFormat("'%s' is not a constant but names a constant member",
                                                           inst.name()));
        }
        member_of[inst.name()] = map->Get(i).value();
        map->DeleteSubrange(i, 1);
        inst.set_opcode(kPlaceholderOpcode);
        inst.clear_literal();
        break;
      }
    }
  }
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ConvertProto(proto.hlo_module(), program_name);
  if (!module.ok()) return module.status();
  package.module = std::move(*module);
  package.module->config().replica_count = std::max<int64_t>(1, proto.config().replica_count());
  package.module->config().num_partitions = std::max<int64_t>(1, proto.config().num_partitions());

  for (hlo::Computation* c : package.module->computations()) {
    for (hlo::Instruction* old : c->instructions()) {
      if (old->opcode() != hlo::Opcode::kUnknown || old->opcode_text() != kPlaceholderOpcode) continue;
      const std::string& member = member_of[old->name()];
      const neff::Entry* entry = neff.Find(member);
      if (!entry) return MemberError(member, absl::StrFormat("missing (constant '%s' lives there)", old->name()));
      absl::StatusOr<NpyArray> npy = ParseNpy(entry->data);
      if (!npy.ok()) return MemberError(member, std::string(npy.status().message()));
      const hlo::Shape shape = old->shape();  // a copy: `old` is removed below
      if (!shape.IsArray() || npy->descr != NpyDescr(shape.type) || npy->dims != shape.dims) {
        return MemberError(member, absl::StrFormat("holds %s%s, constant '%s' is %s", npy->descr,
                                                   absl::StrCat("[", npy->dims.size(), " dims]"),
                                                   old->name(), shape.ToString()));
      }
      auto fresh = std::make_unique<hlo::Instruction>(hlo::Opcode::kConstant, old->name(), shape);
      fresh->attrs() = old->attrs();
      fresh->attrs().literal = hlo::Literal::Elided(shape);
      fresh->set_id(old->id());
      hlo::Instruction* added = c->AddInstruction(std::move(fresh));
      for (hlo::Instruction* pred : old->control_predecessors()) added->AddControlPredecessor(pred);
      old->ReplaceAllUsesWith(added);
      if (absl::Status s = c->RemoveInstruction(old); !s.ok()) return s;
      package.constants.push_back({added->name(), member, shape, npy->data});
    }
  }
  return package;
}

}  // namespace neuron::program
