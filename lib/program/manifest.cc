#include "lib/program/manifest.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "lib/program/dtype.h"

namespace neuron::program {
namespace {

using nlohmann::json;

json TensorToJson(const TensorInfo& t, bool is_input) {
  json j = {{"name", t.name},
            {"index", t.index},
            {"dtype", DtypeName(t.type)},
            {"shape", t.dims},
            {"size", t.size}};
  if (is_input) {
    j["parameter"] = t.parameter;
    if (!t.tuple_index.empty()) j["tuple_index"] = t.tuple_index;
    if (!t.path.empty()) j["path"] = t.path;
  } else if (t.aliased_input >= 0) {
    j["aliased_input"] = t.aliased_input;
    j["must_alias"] = t.must_alias;
  }
  return j;
}

// Typed access with errors that name the key path.
class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}
  absl::Status status() const { return status_; }

  template <typename T>
  void Get(const json& object, const char* key, T* out, bool required = true) {
    if (!status_.ok()) return;
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) Fail(key, "is missing");
      return;
    }
    try {
      *out = it->template get<T>();
    } catch (const json::exception&) {
      Fail(key, "has the wrong type");
    }
  }
  void GetDtype(const json& object, const char* key, hlo::ElementType* out) {
    std::string name;
    Get(object, key, &name);
    if (!status_.ok()) return;
    std::optional<hlo::ElementType> t = DtypeFromName(name);
    if (!t) return Fail(key, absl::StrFormat("names an unknown dtype '%s'", name));
    *out = *t;
  }
  void Fail(const char* key, const std::string& what) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(
          absl::StrFormat("%s: key '%s' %s", where_, key, what));
    }
  }

 private:
  std::string where_;
  absl::Status status_;
};

absl::Status ReadTensors(const json& root, const char* key, bool is_input,
                         std::vector<TensorInfo>* out) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("neff.json: key '%s' is missing or not an array", key));
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& t = (*it)[i];
    Reader r(absl::StrFormat("neff.json: %s[%d]", key, i));
    if (!t.is_object()) return absl::InvalidArgumentError(absl::StrFormat("neff.json: %s[%d] is not an object", key, i));
    TensorInfo info;
    r.Get(t, "name", &info.name);
    r.Get(t, "index", &info.index);
    r.GetDtype(t, "dtype", &info.type);
    r.Get(t, "shape", &info.dims);
    r.Get(t, "size", &info.size);
    if (is_input) {
      r.Get(t, "parameter", &info.parameter);
      r.Get(t, "tuple_index", &info.tuple_index, /*required=*/false);
      r.Get(t, "path", &info.path, /*required=*/false);
    } else {
      r.Get(t, "aliased_input", &info.aliased_input, /*required=*/false);
      r.Get(t, "must_alias", &info.must_alias, /*required=*/false);
    }
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(info));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ManifestToJson(const Manifest& m) {
  json inputs = json::array(), outputs = json::array(), constants = json::array(),
       sharding = json::array();
  for (const TensorInfo& t : m.inputs) inputs.push_back(TensorToJson(t, true));
  for (const TensorInfo& t : m.outputs) outputs.push_back(TensorToJson(t, false));
  for (const ConstantInfo& c : m.constants) {
    constants.push_back({{"name", c.name},
                         {"member", c.member},
                         {"dtype", DtypeName(c.type)},
                         {"shape", c.dims},
                         {"size", c.size}});
  }
  for (const ShardSplit& s : m.sharding) {
    sharding.push_back({{"instruction", s.instruction}, {"dimension", s.dimension}, {"parts", s.parts}});
  }
  json j = {
      {"format", m.format},
      {"format_version", m.format_version},
      {"compiler", {{"name", m.compiler_name}, {"version", m.compiler_version}}},
      {"name", m.name},
      {"target", m.target},
      {"lnc", m.lnc},
      {"optlevel", m.optlevel},
      {"model_type", m.model_type},
      {"auto_cast", m.auto_cast},
      {"auto_cast_type", m.auto_cast_type},
      {"mixed_precision_accumulation", m.mixed_precision_accumulation},
      {"saturate_infinity", m.saturate_infinity},
      {"distribution_strategy", m.distribution_strategy},
      {"fast_context_switch", m.fast_context_switch},
      {"fast_loading", m.fast_loading},
      {"options", m.options},
      {"replica_count", m.replica_count},
      {"num_partitions", m.num_partitions},
      {"collectives", m.collectives},
      {"program", m.program},
      {"inputs", inputs},
      {"outputs", outputs},
      {"constants", constants},
      {"memory",
       {{"constants", m.memory.constants},
        {"inputs", m.memory.inputs},
        {"outputs", m.memory.outputs},
        {"scratch_peak", m.memory.scratch_peak},
        {"aliased", m.memory.aliased},
        {"total", m.memory.total}}},
      {"sharding", sharding},
  };
  return j.dump(2) + "\n";
}

absl::StatusOr<Manifest> ManifestFromJson(std::string_view text) {
  json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return absl::InvalidArgumentError("neff.json: not a JSON object");
  }
  Manifest m;
  Reader r("neff.json");
  r.Get(root, "format", &m.format);
  if (r.status().ok() && m.format != kManifestFormat) {
    r.Fail("format", absl::StrFormat("is '%s', expected '%s'", m.format, kManifestFormat));
  }
  r.Get(root, "format_version", &m.format_version);
  auto compiler = root.find("compiler");
  if (compiler != root.end() && compiler->is_object()) {
    r.Get(*compiler, "name", &m.compiler_name, false);
    r.Get(*compiler, "version", &m.compiler_version, false);
  }
  r.Get(root, "name", &m.name, false);
  r.Get(root, "target", &m.target);
  r.Get(root, "lnc", &m.lnc);
  r.Get(root, "optlevel", &m.optlevel, false);
  r.Get(root, "model_type", &m.model_type, false);
  r.Get(root, "auto_cast", &m.auto_cast, false);
  r.Get(root, "auto_cast_type", &m.auto_cast_type, false);
  r.Get(root, "mixed_precision_accumulation", &m.mixed_precision_accumulation, false);
  r.Get(root, "saturate_infinity", &m.saturate_infinity, false);
  r.Get(root, "distribution_strategy", &m.distribution_strategy, false);
  r.Get(root, "fast_context_switch", &m.fast_context_switch, false);
  r.Get(root, "fast_loading", &m.fast_loading, false);
  r.Get(root, "options", &m.options, false);
  r.Get(root, "replica_count", &m.replica_count, false);
  r.Get(root, "num_partitions", &m.num_partitions, false);
  r.Get(root, "collectives", &m.collectives, false);
  r.Get(root, "program", &m.program);
  if (!r.status().ok()) return r.status();
  if (m.lnc != 1 && m.lnc != 2) {
    return absl::InvalidArgumentError(absl::StrFormat("neff.json: key 'lnc' is %d, expected 1 or 2", m.lnc));
  }
  if (absl::Status s = ReadTensors(root, "inputs", true, &m.inputs); !s.ok()) return s;
  if (absl::Status s = ReadTensors(root, "outputs", false, &m.outputs); !s.ok()) return s;
  auto constants = root.find("constants");
  if (constants != root.end()) {
    if (!constants->is_array()) return absl::InvalidArgumentError("neff.json: key 'constants' is not an array");
    for (size_t i = 0; i < constants->size(); ++i) {
      const json& c = (*constants)[i];
      Reader cr(absl::StrFormat("neff.json: constants[%d]", i));
      if (!c.is_object()) return absl::InvalidArgumentError(absl::StrFormat("neff.json: constants[%d] is not an object", i));
      ConstantInfo info;
      cr.Get(c, "name", &info.name);
      cr.Get(c, "member", &info.member);
      cr.GetDtype(c, "dtype", &info.type);
      cr.Get(c, "shape", &info.dims);
      cr.Get(c, "size", &info.size);
      if (!cr.status().ok()) return cr.status();
      m.constants.push_back(std::move(info));
    }
  }
  auto memory = root.find("memory");
  if (memory != root.end() && memory->is_object()) {
    Reader mr("neff.json: memory");
    mr.Get(*memory, "constants", &m.memory.constants, false);
    mr.Get(*memory, "inputs", &m.memory.inputs, false);
    mr.Get(*memory, "outputs", &m.memory.outputs, false);
    mr.Get(*memory, "scratch_peak", &m.memory.scratch_peak, false);
    mr.Get(*memory, "aliased", &m.memory.aliased, false);
    mr.Get(*memory, "total", &m.memory.total, false);
    if (!mr.status().ok()) return mr.status();
  }
  auto sharding = root.find("sharding");
  if (sharding != root.end() && sharding->is_array()) {
    for (size_t i = 0; i < sharding->size(); ++i) {
      const json& s = (*sharding)[i];
      Reader sr(absl::StrFormat("neff.json: sharding[%d]", i));
      ShardSplit split;
      if (!s.is_object()) return absl::InvalidArgumentError(absl::StrFormat("neff.json: sharding[%d] is not an object", i));
      sr.Get(s, "instruction", &split.instruction);
      sr.Get(s, "dimension", &split.dimension);
      sr.Get(s, "parts", &split.parts);
      if (!sr.status().ok()) return sr.status();
      m.sharding.push_back(std::move(split));
    }
  }
  return m;
}

}  // namespace neuron::program
