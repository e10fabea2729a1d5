#include "tools/neuron-dump/show.h"

#include <sys/stat.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/config/config.h"
#include "lib/device/instance_catalog.h"
#include "lib/dump/core_dump_format.h"
#include "lib/dump/files.h"
#include "lib/dump/input_dump.h"
#include "lib/hlo/computation.h"
#include "lib/hlo/instruction.h"
#include "lib/hlo/opcode.h"
#include "lib/neff/header.h"
#include "lib/neff/neff.h"
#include "lib/program/package.h"
#include "lib/support/parse.h"
#include "lib/tensorfile/byte_source.h"
#include "lib/tensorfile/tensor_file.h"
#include "tools/neuron-dump/show_tensor_file.h"

namespace neuron::dump {
namespace {

using nlohmann::json;

absl::StatusOr<json> DescribeCoreDump(const std::string& path, std::string_view bytes) {
  absl::StatusOr<std::vector<Section>> sections = DecodeCoreDump(bytes, path);
  if (!sections.ok()) return sections.status();
  json v = {{"kind", "core-dump"}, {"file", path}, {"buffers", json::array()}};
  bool have_info = false;
  for (const Section& s : *sections) {
    switch (s.kind) {
      case SectionKind::kInfo:
        v["info"] = s.meta;
        have_info = true;
        break;
      case SectionKind::kBuffer:
        v["buffers"].push_back(s.meta);
        break;
      case SectionKind::kMemlog:
        v["memlog"] = s.data;
        break;
      default:
        break;  // a newer writer's section
    }
  }
  if (!have_info) return absl::InvalidArgumentError(absl::StrCat(path, ": core dump has no info section"));
  return v;
}

absl::StatusOr<json> DescribeManifest(const std::string& path, const json& m) {
  if (!m.contains("inputs") || !m["inputs"].is_array())
    return absl::InvalidArgumentError(absl::StrCat(path, ": input-dump manifest has no inputs list"));
  return json{{"kind", "input-dump"}, {"file", path}, {"manifest", m}};
}

std::string Hex(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) absl::StrAppendFormat(&s, "%02x", p[i]);
  return s;
}

absl::StatusOr<json> DescribeNeff(const std::string& path, std::string_view bytes) {
  absl::StatusOr<neff::Header> h = neff::ReadHeaderOnly(bytes);
  if (!h.ok() && bytes.size() < neff::kHeaderSize) {
    // Cut short inside its header: still a NEFF, and not a loadable one.
    return json{{"kind", "neff"},
                {"file", path},
                {"loadable_here", false},
                {"not_loadable_because", std::string(h.status().message())}};
  }
  if (!h.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", h.status().message()));
  json header = {
      {"pkg_version", h->pkg_version},
      {"header_size", h->header_size},
      {"data_size", h->data_size},
      {"neff_version", neff::FormatVersion(h->version_major, h->version_minor)},
      {"build_version", h->build_version},
      {"num_tpb", h->num_tpb},
      {"hash", neff::FormatHash(h->hash, neff::HashLength(h->pkg_version))},
      {"uuid", neff::FormatUuid(h->uuid)},
      {"name", h->name},
      {"requested_tpb_count", h->requested_tpb_count},
      {"feature_bits", absl::StrFormat("0x%x", h->feature_bits)},
      {"features", neff::DescribeFeatures(h->feature_bits)},
      {"lnc_size", h->lnc_size},
  };
  size_t nodes = 0;
  while (nodes < h->tpb_per_node.size() && h->tpb_per_node[nodes] != 0) ++nodes;
  header["tpb_per_node"] = Hex(h->tpb_per_node.data(), nodes);
  // Whether this host's simulated device would load it, and if not why:
  // the format version, a truncated payload, and (below) the target.
  std::vector<std::string> not_loadable;
  if (absl::Status s = neff::CheckCompatibility(*h, /*allow_legacy=*/false); !s.ok()) {
    not_loadable.push_back(std::string(s.message()));
  }
  if (absl::Status s = neff::CheckSizes(*h, bytes); !s.ok()) {
    not_loadable.push_back(std::string(s.message()));
  }
  json v = {{"kind", "neff"}, {"file", path}, {"header", header}};
  auto verdict = [&] {
    v["loadable_here"] = not_loadable.empty();
    if (!not_loadable.empty()) v["not_loadable_because"] = absl::StrJoin(not_loadable, "; ");
  };
  verdict();
  absl::StatusOr<std::vector<neff::Entry>> members = neff::ListMembers(bytes);
  if (!members.ok()) {
    v["members_error"] = std::string(members.status().message());
    return v;
  }
  v["members"] = json::array();
  for (const neff::Entry& e : *members) {
    if (e.is_directory) continue;
    v["members"].push_back({{"name", e.name}, {"size", e.size}});
  }
  // neuron-tools NEFFs: the manifest's tensors and options, the operators.
  absl::StatusOr<neff::Package> package = neff::Read(bytes, neff::InspectOptions());
  if (!package.ok()) return v;
  if (const neff::Entry* m = package->Find("neff.json"); m != nullptr) {
    json manifest = json::parse(m->data, nullptr, false);
    if (!manifest.is_discarded()) {
      v["manifest"] = manifest;
      // The target against the instance simulated here (NEURON_SIM_INSTANCE_TYPE).
      const std::string target = manifest.value("target", "");
      absl::StatusOr<const device::InstanceType*> here =
          device::SelectInstanceType(config::ProcessEnv());
      if (here.ok() && !target.empty() &&
          device::CoreGeneration(target) != device::CoreGeneration((*here)->arch)) {
        const device::InstanceType* there = device::InstanceForTarget(target);
        not_loadable.push_back(absl::StrFormat(
            "compiled for %s, this device is %s (%s%s)", target, (*here)->arch, (*here)->name,
            there == nullptr ? ""
                             : absl::StrFormat("; set NEURON_SIM_INSTANCE_TYPE=%s to simulate a %s "
                                               "instance",
                                               there->name, there->arch)));
        verdict();
      }
    }
  }
  absl::StatusOr<program::Package> prog = program::Deserialize(*package);
  if (prog.ok() && prog->module != nullptr) {
    std::map<std::string, int64_t> ops;
    for (const hlo::Computation* c : prog->module->computations())
      for (const hlo::Instruction* i : c->instructions())
        ++ops[std::string(hlo::OpcodeName(i->opcode()))];
    v["operators"] = ops;
  }
  return v;
}

std::string Shape(const json& t) {
  std::vector<std::string> dims;
  if (t.contains("shape"))
    for (const json& d : t["shape"]) dims.push_back(d.dump());
  return absl::StrCat(t.value("dtype", "?"), "[", absl::StrJoin(dims, ","), "]");
}

std::string Str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

absl::StatusOr<json> Describe(const std::string& path) {
  std::string file = path;
  struct stat st{};
  if (path != "-" && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::string dir = path;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    file = dir + "/manifest.json";
  }
  // A tensor file is described from its headers, never read whole.
  if (path != "-" && !S_ISDIR(st.st_mode)) {
    absl::StatusOr<std::shared_ptr<tensorfile::ByteSource>> source = tensorfile::ByteSource::OpenFile(file);
    if (source.ok()) {
      absl::StatusOr<std::string> head = (*source)->ReadSome(0, 16);
      if (head.ok() && tensorfile::DetectFormat(*head).has_value() && !neff::LooksLikeNeff(*head)) {
        absl::StatusOr<std::unique_ptr<tensorfile::TensorFile>> tf =
            tensorfile::TensorFile::FromSource(std::move(*source));
        if (!tf.ok()) return tf.status();
        return DescribeTensorFile(**tf);
      }
    }
  }
  absl::StatusOr<std::string> bytes = ReadWholeFile(file);
  if (!bytes.ok()) return bytes.status();
  const std::string name = path == "-" ? "<stdin>" : file;
  if (!LooksLikeZstd(*bytes) && !neff::LooksLikeNeff(*bytes) && tensorfile::DetectFormat(*bytes).has_value()) {
    absl::StatusOr<std::unique_ptr<tensorfile::TensorFile>> tf = tensorfile::TensorFile::FromBytes(*bytes, name);
    if (!tf.ok()) return tf.status();
    return DescribeTensorFile(**tf);
  }
  if (LooksLikeZstd(*bytes)) return DescribeCoreDump(name, *bytes);
  if (neff::LooksLikeNeff(*bytes)) return DescribeNeff(name, *bytes);
  const json j = json::parse(*bytes, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.value("format", "") == kInputDumpFormat)
    return DescribeManifest(name, j);
  return absl::InvalidArgumentError(absl::StrCat(
      name, ": not a core dump, an input-dump manifest, a NEFF or a tensor file (.npy, .npz, safetensors)"));
}

std::string FormatText(const json& v) {
  std::string out;
  const std::string kind = v.value("kind", "");
  if (kind == "tensor-file") return FormatTensorFileText(v);
  if (kind == "core-dump") {
    const json& i = v["info"];
    const json& e = i.value("error", json::object());
    const json& n = i.value("neff", json::object());
    const json& p = i.value("program", json::object());
    absl::StrAppend(&out, "core dump   ", Str(v, "file"), "\n");
    absl::StrAppend(&out, "model       ", Str(i, "model"), " (NEFF '", Str(n, "name"), "' uuid ",
                    Str(n, "uuid"), n.value("path", "").empty() ? "" : ", " + Str(n, "path"), ")\n");
    absl::StrAppend(&out, "error       ", Str(e, "name"), " (", Str(e, "code"), ") in ",
                    Str(e, "location"), ": ", Str(e, "message"), "\n");
    absl::StrAppend(&out, "where       nd", Str(i, "device"), " nc", Str(i, "core"), ", instance ",
                    Str(i, "instance_id"), ", cluster ", Str(i, "cluster_id"), ", pid ",
                    Str(i, "pid"), " tid ", Str(i, "tid"), ", log id ", Str(i, "log_id"), "\n");
    absl::StrAppend(&out, "time        ", Str(i, "time"), " (execution #", Str(i, "execution"), ")\n");
    std::vector<std::string> stack;
    if (p.contains("stack"))
      for (const json& s : p["stack"]) stack.push_back(s.is_string() ? s.get<std::string>() : "");
    absl::StrAppend(&out, "program     ",
                    p.value("completed", false) ? "ran to completion"
                    : stack.empty()             ? "stopped before any instruction"
                                                : "stopped at " + absl::StrJoin(stack, " > "),
                    " (", Str(p, "steps_started"), " steps started)\n");
    if (p.contains("first_nonfinite_instruction"))
      absl::StrAppend(&out, "first NaN   ", Str(p, "first_nonfinite_instruction"), "\n");
    absl::StrAppend(&out, "buffers\n");
    for (const json& b : v["buffers"]) {
      const uint64_t bytes = b.value("bytes", uint64_t{0}), stored = b.value("stored", uint64_t{0});
      absl::StrAppendFormat(&out, "  %-6s #%-3s %-24s %-20s %s%s\n", Str(b, "role"), Str(b, "position"),
                            Str(b, "name"), Shape(b), FormatBytes(bytes),
                            stored == bytes ? "" : absl::StrCat(" (", FormatBytes(stored), " kept)"));
    }
    if (i.contains("settings") && !i["settings"].empty()) {
      absl::StrAppend(&out, "settings\n");
      for (auto it = i["settings"].begin(); it != i["settings"].end(); ++it)
        absl::StrAppend(&out, "  ", it.key(), "=", it.value().is_string() ? it.value().get<std::string>() : it.value().dump(), "\n");
    }
    const std::string log = v.value("memlog", "");
    std::vector<std::string> lines = absl::StrSplit(log, '\n', absl::SkipEmpty());
    absl::StrAppend(&out, "log ring    ", lines.size(), " lines", lines.size() > 20 ? ", last 20" : "", "\n");
    for (size_t k = lines.size() > 20 ? lines.size() - 20 : 0; k < lines.size(); ++k)
      absl::StrAppend(&out, "  ", lines[k], "\n");
  } else if (kind == "input-dump") {
    const json& m = v["manifest"];
    const json& n = m.value("neff", json::object());
    const json& s = m.value("status", json::object());
    absl::StrAppend(&out, "input dump  ", Str(v, "file"), "\n");
    absl::StrAppend(&out, "model       ", Str(m, "model"), " (NEFF '", Str(n, "name"), "' uuid ",
                    Str(n, "uuid"), ")\n");
    absl::StrAppend(&out, "neff        ", Str(n, "path").empty() ? "(loaded from memory)" : Str(n, "path"), "\n");
    absl::StrAppend(&out, "status      ", Str(s, "name"), " (", Str(s, "code"), "): ", Str(m, "error"), "\n");
    absl::StrAppend(&out, "where       nd", Str(m, "device"), " nc", Str(m, "core"), ", pid ",
                    Str(m, "pid"), ", ", Str(m, "time"), "\n");
    absl::StrAppend(&out, "inputs\n");
    for (const json& t : m["inputs"])
      absl::StrAppendFormat(&out, "  #%-3s %-24s %-20s %-10s %s\n", Str(t, "position"), Str(t, "name"),
                            Shape(t), FormatBytes(t.value("bytes", uint64_t{0})), Str(t, "file"));
    absl::StrAppend(&out, "replay      ", Str(m, "replay"), "\n");
  } else if (kind == "neff" && !v.contains("header")) {
    absl::StrAppend(&out, "NEFF        ", Str(v, "file"), "\n");
    absl::StrAppend(&out, "loadable    no: ", Str(v, "not_loadable_because"), "\n");
  } else if (kind == "neff") {
    const json& h = v["header"];
    absl::StrAppend(&out, "NEFF        ", Str(v, "file"), "\n");
    absl::StrAppend(&out, "name        ", Str(h, "name"), "\n");
    absl::StrAppend(&out, "uuid        ", Str(h, "uuid"), "\n");
    absl::StrAppend(&out, "built by    ", Str(h, "build_version").empty() ? "(not recorded)" : Str(h, "build_version"), "\n");
    absl::StrAppend(&out, "format      NEFF ", Str(h, "neff_version"), ", packaging ",
                    Str(h, "pkg_version"), ", header ", Str(h, "header_size"), " B, payload ",
                    FormatBytes(h.value("data_size", uint64_t{0})), "\n");
    absl::StrAppend(&out, "LNC         ", Str(h, "lnc_size"), " (num_tpb ", Str(h, "num_tpb"),
                    ", requested ", Str(h, "requested_tpb_count"), ", tpb per node ",
                    Str(h, "tpb_per_node").empty() ? "-" : Str(h, "tpb_per_node"), ")\n");
    absl::StrAppend(&out, "features    ", Str(h, "feature_bits"), " (", Str(h, "features"), ")\n");
    absl::StrAppend(&out, "hash        ", Str(h, "hash"), "\n");
    if (!v.value("loadable_here", true))
      absl::StrAppend(&out, "loadable    no: ", Str(v, "not_loadable_because"), "\n");
    if (v.contains("members")) {
      absl::StrAppend(&out, "members     ", v["members"].size(), "\n");
      for (const json& m : v["members"])
        absl::StrAppendFormat(&out, "  %10s  %s\n", FormatBytes(m.value("size", uint64_t{0})), Str(m, "name"));
    } else if (v.contains("members_error")) {
      absl::StrAppend(&out, "members     unreadable: ", Str(v, "members_error"), "\n");
    }
    if (v.contains("manifest")) {
      const json& m = v["manifest"];
      const json& comp = m.value("compiler", json::object());
      absl::StrAppend(&out, "compiler    ", Str(comp, "name"), " ", Str(comp, "version"), "\n");
      std::vector<std::string> opts;
      for (const char* k : {"target", "lnc", "optlevel", "model_type", "auto_cast", "auto_cast_type",
                            "mixed_precision_accumulation", "fast_loading", "options"})
        if (m.contains(k) && !m[k].is_array()) opts.push_back(absl::StrCat(k, "=", Str(m, k)));
      absl::StrAppend(&out, "settings    ", absl::StrJoin(opts, " "), "\n");
      if (m.contains("options") && m["options"].is_array()) {
        std::vector<std::string> flags;
        for (const json& f : m["options"]) flags.push_back(f.is_string() ? f.get<std::string>() : f.dump());
        absl::StrAppend(&out, "options     ", absl::StrJoin(flags, " "), "\n");
      }
      for (const char* role : {"inputs", "outputs"}) {
        if (!m.contains(role) || !m[role].is_array()) continue;
        absl::StrAppend(&out, role, "\n");
        for (const json& t : m[role]) {
          std::string alias;
          if (t.contains("aliased_input") && t["aliased_input"].is_number_integer())
            alias = absl::StrCat("  in input #", t["aliased_input"].get<int64_t>(),
                                 t.value("must_alias", false) ? " (must-alias)" : " (may-alias)");
          absl::StrAppendFormat(&out, "  #%-3s %-24s %s%s\n", Str(t, "index"), Str(t, "name"), Shape(t), alias);
        }
      }
      // The memory plan: what a core needs for the model (neuron-load checks it).
      if (m.contains("memory") && m["memory"].is_object()) {
        const json& mem = m["memory"];
        auto bytes = [&](const char* k) {
          return FormatBytes(mem.contains(k) && mem[k].is_number_unsigned() ? mem[k].get<uint64_t>() : 0);
        };
        absl::StrAppend(&out, "memory      ", bytes("total"), ": inputs ", bytes("inputs"), ", outputs ",
                        bytes("outputs"), " (", bytes("aliased"), " of them in their inputs), scratch ",
                        bytes("scratch_peak"), ", constants ", bytes("constants"), "\n");
      }
    }
    if (v.contains("operators")) {
      std::vector<std::string> ops;
      for (auto it = v["operators"].begin(); it != v["operators"].end(); ++it)
        ops.push_back(absl::StrCat(it.key(), " ", it.value().dump()));
      absl::StrAppend(&out, "operators   ", absl::StrJoin(ops, ", "), "\n");
    }
  }
  return out;
}

}  // namespace neuron::dump
