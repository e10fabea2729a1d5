// Loading a NEFF onto a core: read, hash (NEURON_RT_VALIDATE_HASH), version
// and LNC checks (NEURON_RT_ALLOW_LEGACY_NEFF), decompression, the program,
// the target check, building the executable, and device-memory placement.
// Each step is timed for neuron-load.
#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/device/instance_catalog.h"
#include "lib/log/log.h"
#include "lib/neff/digest.h"
#include "lib/neff/mapped_file.h"
#include "lib/program/dtype.h"
#include "lib/runtime/memory_check.h"
#include "lib/runtime/model_state.h"
#include "lib/runtime/runtime.h"
#include "lib/runtime/scratchpad.h"
#include "lib/runtime/status.h"
#include "lib/support/parse.h"
#include "lib/support/progress.h"

namespace neuron::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The header hash against the payload, before anything reads the payload,
// so a flipped byte is reported as such and not as a decompression error.
absl::Status CheckHash(const neff::Header& header, std::string_view bytes) {
  if (bytes.size() < neff::kHeaderSize || bytes.size() - neff::kHeaderSize != header.data_size) {
    return absl::OkStatus();  // neff::Read reports the truncation itself
  }
  std::string_view payload = bytes.substr(neff::kHeaderSize);
  const bool md5 = header.pkg_version == neff::kPkgTgzMd5;
  absl::StatusOr<std::array<uint8_t, 32>> actual =
      neff::ComputeDigest(md5 ? neff::DigestKind::kMd5 : neff::DigestKind::kSha256, payload);
  if (!actual.ok()) return RtError(NRT_FAILURE, std::string(actual.status().message()));
  const size_t length = md5 ? 16 : 32;
  if (!std::equal(actual->begin(), actual->begin() + length, header.hash.begin())) {
    return RtError(NRT_INVALID,
                   "NEFF hash mismatch: the payload does not match the header's hash (corrupt or "
                   "modified file; NEURON_RT_VALIDATE_HASH is on)");
  }
  return absl::OkStatus();
}

absl::Status CheckTarget(const program::Manifest& manifest, const device::InstanceType& instance,
                         const config::RuntimeConfig& config) {
  const int neff_gen = device::CoreGeneration(manifest.target);
  const int device_gen = device::CoreGeneration(instance.arch);
  if (neff_gen == device_gen && neff_gen != 0) return absl::OkStatus();
  // The simulated instance a NEFF of that target runs on, for the hint.
  std::string simulate;
  if (const device::InstanceType* t = device::InstanceForTarget(manifest.target)) {
    simulate = absl::StrFormat(", or simulate a %s instance (NEURON_SIM_INSTANCE_TYPE=%s)", t->arch,
                               t->name);
  }
  const std::string what = absl::StrFormat(
      "NEFF was compiled for %s but this instance is %s (%s); recompile with --target %s%s",
      manifest.target, instance.name, instance.arch, instance.arch, simulate);
  if (neff_gen != 0 && neff_gen < device_gen && config.allow_legacy_neff != 0) {
    NEURON_LOG(NRT, kWarn, "%s (loading anyway: NEURON_RT_ALLOW_LEGACY_NEFF is set)", what);
    return absl::OkStatus();
  }
  return RtError(NRT_UNSUPPORTED_NEFF_VERSION, what);
}

// The biggest single intermediate value of the entry computation: what must
// fit one scratchpad page.
uint64_t LargestVariable(const hlo::Module& module) {
  uint64_t largest = 0;
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return 0;
  for (const hlo::Instruction* instr : entry->instructions()) {
    if (instr->opcode() == hlo::Opcode::kParameter || instr->opcode() == hlo::Opcode::kConstant) {
      continue;
    }
    std::optional<int64_t> bytes = program::ArrayBytes(instr->shape());
    if (bytes.has_value()) largest = std::max<uint64_t>(largest, static_cast<uint64_t>(*bytes));
  }
  return largest;
}

std::vector<TensorInfo> ToTensorInfos(const std::vector<program::TensorInfo>& infos,
                                      const hlo::Module& module, bool inputs) {
  std::vector<TensorInfo> out;
  for (const program::TensorInfo& t : infos) {
    TensorInfo info;
    info.name = t.name;
    // Inputs are named by their HLO parameter, which is what users know.
    if (inputs && t.tuple_index.empty() && module.entry() != nullptr) {
      const hlo::Instruction* p = module.entry()->parameter(static_cast<size_t>(t.parameter));
      if (p != nullptr) info.name = p->name();
    }
    info.position = static_cast<int>(t.index);
    info.path = t.path;
    info.shape = hlo::Shape::Array(t.type, t.dims);
    info.bytes = static_cast<uint64_t>(t.size);
    info.aliased_input = static_cast<int>(t.aliased_input);
    out.push_back(std::move(info));
  }
  return out;
}

// Member-held constants: checks each against its instruction's shape and
// maps the instruction to its bytes in the NEFF, which the executable uses
// in place (no copy, no first touch of fresh memory at load).
absl::StatusOr<std::map<const hlo::Instruction*, const uint8_t*>> BindConstants(
    const program::Package& package) {
  std::map<const hlo::Instruction*, const uint8_t*> bound;
  for (const program::ConstantRef& ref : package.constants) {
    hlo::Instruction* instr = nullptr;
    for (hlo::Computation* c : package.module->computations()) {
      if ((instr = c->Find(ref.instruction)) != nullptr) break;
    }
    if (instr == nullptr) {
      return RtError(NRT_INVALID, absl::StrFormat("constant '%s' is not in the program",
                                                  ref.instruction));
    }
    const std::optional<int64_t> count = instr->shape().ElementCount();
    const uint64_t need = count ? static_cast<uint64_t>(*count) *
                                      static_cast<uint64_t>(hlo::StorageBytes(instr->shape().type))
                                : 0;
    if (!instr->shape().IsArray() || ref.bytes.size() != need) {
      return RtError(NRT_INVALID, absl::StrFormat("constant '%s' has %d bytes, its shape needs %d",
                                                  ref.instruction, ref.bytes.size(), need));
    }
    bound[instr] = reinterpret_cast<const uint8_t*>(ref.bytes.data());
  }
  return bound;
}

}  // namespace

class ModelLoader {
 public:
  static absl::StatusOr<std::unique_ptr<Model>> Load(Runtime& rt, Core* core,
                                                     std::shared_ptr<const void> keepalive,
                                                     std::string_view bytes,
                                                     const std::string& display,
                                                     const LoadOptions& options,
                                                     Clock::time_point start, double read_ms);
};

absl::StatusOr<std::unique_ptr<Model>> ModelLoader::Load(
    Runtime& rt, Core* core, std::shared_ptr<const void> keepalive, std::string_view bytes,
    const std::string& display, const LoadOptions& options, Clock::time_point start,
    double read_ms) {
  const config::RuntimeConfig& cfg = rt.config();
  auto fail = [&](const absl::Status& s) {
    return WithContext(s, display);
  };
  auto state = std::make_unique<ModelState>();
  state->core = core;
  state->config = &rt.config();
  state->timings.read_ms = read_ms;
  Progress progress(absl::StrCat("loading ", display), 5);

  absl::StatusOr<neff::Header> header = neff::ReadHeaderOnly(bytes);
  if (!header.ok()) return fail(header.status());
  neff::ReadOptions read_options;
  read_options.allow_legacy = cfg.allow_legacy_neff != 0;
  // The LNC is checked after the target (below): a NEFF for another
  // generation says so, not that its LNC differs.
  if (cfg.validate_hash) {
    // Version checks come first: a NEFF this build cannot read says so.
    if (absl::Status s = neff::CheckCompatibility(*header, read_options.allow_legacy); !s.ok()) {
      return fail(s);
    }
    auto t = Clock::now();
    if (absl::Status s = CheckHash(*header, bytes); !s.ok()) return fail(s);
    state->timings.hash_ms = MsSince(t);
  }

  progress.Update(1, "reading the members");
  auto t = Clock::now();
  absl::StatusOr<neff::Package> package = neff::Read(bytes, read_options);
  if (!package.ok()) return fail(package.status());
  state->neff = std::move(*package);
  // Uncompressed members view `bytes`: keep them alive with the model.
  if (state->neff.storage == nullptr) state->neff.storage = keepalive;
  state->timings.decompress_ms = MsSince(t);

  progress.Update(2, "reading the program");
  t = Clock::now();
  absl::StatusOr<program::Package> program = program::Deserialize(state->neff);
  if (!program.ok()) {
    return fail(RtError(NRT_INVALID, std::string(program.status().message())));
  }
  state->program = std::move(*program);
  const program::Manifest& manifest = state->program.manifest;
  if (absl::Status s = CheckTarget(manifest, rt.instance(), cfg); !s.ok()) return fail(s);
  const uint32_t neff_lnc = state->neff.header.lnc_size == 0 ? 1 : state->neff.header.lnc_size;
  if (neff_lnc != static_cast<uint32_t>(cfg.logical_nc_config)) {
    return fail(RtError(NRT_INVALID,
                        absl::StrFormat("NEFF was compiled for logical core size (LNC) %d, the device "
                                        "uses LNC %d (NEURON_LOGICAL_NC_CONFIG=%d, or recompile with "
                                        "--logical-nc-config %d)",
                                        neff_lnc, cfg.logical_nc_config, neff_lnc,
                                        cfg.logical_nc_config)));
  }
  absl::StatusOr<std::map<const hlo::Instruction*, const uint8_t*>> constants =
      BindConstants(state->program);
  if (!constants.ok()) return fail(constants.status());
  state->timings.deserialize_ms = MsSince(t);

  // Before any buffer is made: the plan must fit the core and the host.
  if (manifest.memory.total > 0) {
    const neff::Entry* code = state->neff.Find(manifest.program);
    const uint64_t need = static_cast<uint64_t>(manifest.memory.total) + (code != nullptr ? code->size : 0);
    const std::string what = absl::StrCat("model '", manifest.name, "'");
    const std::string parts = DescribePlan(manifest.memory);
    if (absl::Status s = CheckDeviceMemory(*core, need, what, parts); !s.ok()) return fail(s);
    if (absl::Status s = CheckHostMemory(need, what, parts); !s.ok()) return fail(s);
  }

  progress.Update(3, "planning the kernels");
  t = Clock::now();
  kernels::BuildOptions build;
  build.external_constant = [&constants](const hlo::Instruction& instr) -> const uint8_t* {
    auto it = constants->find(&instr);
    return it == constants->end() ? nullptr : it->second;
  };
  absl::StatusOr<std::unique_ptr<kernels::Executable>> exe =
      kernels::Executable::Build(*state->program.module, build);
  if (!exe.ok()) {
    // Too big for this host's memory is a resource limit, not a bad NEFF.
    const NRT_STATUS code = absl::IsResourceExhausted(exe.status()) ? NRT_RESOURCE : NRT_INVALID;
    return fail(RtError(code, std::string(exe.status().message())));
  }
  state->executable = std::move(*exe);
  state->timings.build_ms = MsSince(t);
  // The kernels' workspace is known once they are planned, and taken as
  // they run: it must fit what the host has left after the model's buffers.
  const uint64_t workspace = static_cast<uint64_t>(state->executable->memory().workspace);
  if (absl::Status s = CheckHostMemory(workspace, absl::StrCat("the kernels' workspace of model '", manifest.name, "'"));
      !s.ok()) {
    return fail(s);
  }
  progress.Update(4, "placing it in device memory");
  if (!cfg.disable_debug_info) {
    t = Clock::now();
    state->debug_info = DebugInfo::Build(*state->program.module);
    state->timings.debug_info_ms = MsSince(t);
  }

  state->name = manifest.name.empty() ? state->neff.header.name : manifest.name;
  state->target = manifest.target;
  state->inputs = ToTensorInfos(manifest.inputs, *state->program.module, /*inputs=*/true);
  // Output names are the manifest's, which the compiler took from the HLO
  // as written (the program here is the optimized one).
  state->outputs = ToTensorInfos(manifest.outputs, *state->program.module, /*inputs=*/false);

  // Device memory: the program, its constants, and scratchpad pages for
  // the intermediates. Only accounted (the executable keeps its data in
  // host memory it reuses), so nothing here touches fresh pages.
  t = Clock::now();
  const kernels::MemoryUsage mem = state->executable->memory();
  const neff::Entry* code = state->neff.Find(manifest.program);
  const uint64_t code_bytes = code != nullptr ? code->size : 0;
  const uint64_t largest = LargestVariable(*state->program.module);
  const ScratchpadPlan plan = PlanScratchpad(cfg, static_cast<uint64_t>(mem.intermediates), largest);
  if (plan.recommended_page_mib.has_value()) {
    NEURON_LOG(NRT, kWarn, "%s", ScratchpadWarning(cfg, plan, largest));
  }
  struct Need {
    uint64_t bytes;
    device::MemoryCategory category;
    const char* what;
  };
  const Need needs[] = {
      {code_bytes, device::MemoryCategory::kModelCode, "model code"},
      {static_cast<uint64_t>(mem.constants), device::MemoryCategory::kConstants, "constants"},
      {plan.bytes, device::MemoryCategory::kModelSharedScratchpad, "scratchpad"},
  };
  for (const Need& need : needs) {
    if (need.bytes == 0) continue;
    absl::StatusOr<device::HbmBlock> block = core->Allocate(
        need.bytes, need.category, absl::StrFormat("the %s of model '%s'", need.what, state->name),
        /*host_access=*/false);
    if (!block.ok()) {
      for (const device::HbmBlock& b : state->blocks) core->Free(b);
      return fail(block.status());
    }
    state->blocks.push_back(*block);
  }
  state->timings.place_ms = MsSince(t);

  LoadCost& cost = state->cost;
  cost.weights = static_cast<uint64_t>(mem.constants);
  cost.model_code = code_bytes;
  cost.scratchpad = plan.bytes;
  cost.scratchpad_page = plan.page_bytes;
  cost.largest_variable = largest;
  cost.intermediates = static_cast<uint64_t>(mem.intermediates);
  cost.planned_intermediates = static_cast<uint64_t>(std::max<int64_t>(0, manifest.memory.scratch_peak));
  cost.plan = manifest.memory;
  cost.workspace = workspace;
  for (const TensorInfo& i : state->inputs) cost.io_tensors += i.bytes;
  for (const TensorInfo& o : state->outputs) cost.io_tensors += o.bytes;
  cost.peak = cost.weights + cost.model_code + cost.scratchpad + cost.io_tensors;

  const int host_cpus = device::HostCpuCount();
  state->threads = options.threads > 0
                       ? options.threads
                       : std::max(1, host_cpus / static_cast<int>(rt.cores().size()));
  state->timings.total_ms = MsSince(start);
  core->CountLoad();
  NEURON_LOG(NRT, kInfo, "Loaded %s on nc%d in %.3f ms", display, core->id(),
             state->timings.total_ms);
  return std::unique_ptr<Model>(new Model(std::move(state)));
}

absl::StatusOr<std::unique_ptr<Model>> Runtime::LoadFile(const std::string& path, int core,
                                                         const LoadOptions& options) {
  absl::StatusOr<Core*> c = GetCore(core);
  if (!c.ok()) return c.status();
  const auto start = Clock::now();
  absl::StatusOr<std::shared_ptr<neff::MappedFile>> file = neff::MappedFile::Open(path);
  if (!file.ok()) return file.status();
  const std::string display = path == "-" ? "<stdin>" : path;
  absl::StatusOr<std::unique_ptr<Model>> model =
      ModelLoader::Load(*this, *c, *file, (*file)->bytes(), display, options, start,
                        MsSince(start));
  if (model.ok() && path != "-") (*model)->state_->path = path;
  return model;
}

absl::StatusOr<std::unique_ptr<Model>> Runtime::LoadBytes(std::string_view bytes, int core,
                                                          const LoadOptions& options) {
  absl::StatusOr<Core*> c = GetCore(core);
  if (!c.ok()) return c.status();
  // The caller may free its bytes after loading (nrt_load): keep a copy.
  auto owned = std::make_shared<const std::string>(bytes);
  const std::string display = options.display_name.empty() ? "NEFF" : options.display_name;
  absl::StatusOr<std::unique_ptr<Model>> model =
      ModelLoader::Load(*this, *c, owned, *owned, display, options, Clock::now(), 0);
  if (model.ok() && !options.source_path.empty()) (*model)->state_->path = options.source_path;
  return model;
}

}  // namespace neuron::runtime
