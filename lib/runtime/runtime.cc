#include "lib/runtime/runtime.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/log/log.h"
#include "lib/runtime/status.h"
#include "lib/support/parse.h"

namespace neuron::runtime {

absl::StatusOr<PlatformView> ProbePlatform(const config::EnvLookup& env) {
  PlatformView view;
  absl::StatusOr<const device::InstanceType*> instance = device::SelectInstanceType(env);
  if (!instance.ok()) return RtError(NRT_INVALID, std::string(instance.status().message()));
  view.instance = *instance;
  const config::Resolution resolution =
      config::Resolve(env, device::PlatformFactsFor(**instance));
  if (!resolution.ok()) return RtError(resolution.init_status, resolution.init_error);
  absl::StatusOr<device::LogicalCoreMap> map =
      device::LogicalCoreMap::Create(**instance, resolution.config.logical_nc_config);
  if (!map.ok()) return RtError(NRT_INVALID, std::string(map.status().message()));
  view.core_map = *map;
  view.visible_cores = resolution.config.visible_cores;
  return view;
}

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Init(InitOptions options) {
  std::unique_ptr<Runtime> rt(new Runtime());
  absl::StatusOr<const device::InstanceType*> instance =
      device::SelectInstanceType(options.env);
  if (!instance.ok()) return RtError(NRT_INVALID, std::string(instance.status().message()));
  rt->instance_ = *instance;

  rt->resolution_ = config::Resolve(options.env, device::PlatformFactsFor(**instance));
  const config::RuntimeConfig& cfg = rt->resolution_.config;
  if (options.configure_logging) {
    log::Configure(cfg);
    log::ReportDiagnostics(rt->resolution_.diagnostics);
  }
  if (!rt->resolution_.ok()) {
    return RtError(rt->resolution_.init_status, rt->resolution_.init_error);
  }

  absl::StatusOr<device::LogicalCoreMap> map =
      device::LogicalCoreMap::Create(**instance, cfg.logical_nc_config);
  if (!map.ok()) return RtError(NRT_INVALID, std::string(map.status().message()));
  rt->core_map_ = *map;

  std::vector<int> wanted = cfg.visible_cores;
  if (options.cores.has_value()) {
    wanted = *options.cores;
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    for (int c : wanted) {
      if (!std::binary_search(cfg.visible_cores.begin(), cfg.visible_cores.end(), c)) {
        return RtError(NRT_INVALID,
                       absl::StrFormat("NeuronCore %d is not visible to this process "
                                       "(visible: %s, NEURON_RT_VISIBLE_CORES)",
                                       c, FormatRangeList(cfg.visible_cores)));
      }
    }
  }
  if (!options.cores.has_value() && options.first_visible_core_only && !wanted.empty()) {
    if (options.visible_core_index >= wanted.size()) {
      return RtError(NRT_RESOURCE,
                     absl::StrFormat("local rank %d needs NeuronCore #%d of this host, but %d are "
                                     "visible (NEURON_RT_VISIBLE_CORES, NEURON_SIM_INSTANCE_TYPE)",
                                     options.visible_core_index, options.visible_core_index,
                                     wanted.size()));
    }
    wanted = {wanted[options.visible_core_index]};
  }
  // The visible cores in order, for first_free_core.
  const std::vector<int> candidates =
      options.first_free_core && !options.cores.has_value() ? cfg.visible_cores : wanted;
  if (wanted.empty()) return RtError(NRT_INVALID, "no NeuronCore to use");

  const std::string root = device::SimulatedRootPath(options.env);
  absl::StatusOr<std::unique_ptr<device::SimDeviceTree>> tree =
      device::SimDeviceTree::Open(root, **instance);
  if (!tree.ok()) return RtError(NRT_FAILURE, std::string(tree.status().message()));
  rt->tree_ = std::move(*tree);

  absl::StatusOr<std::unique_ptr<device::CoreLease>> lease =
      device::AcquireCores(root, rt->core_map_, wanted, device::CurrentProcessOwner());
  if (!lease.ok() && options.first_free_core && candidates.size() > 1) {
    // The first core is held: the next free one will do, so that several
    // tools can share an instance without choosing cores by hand.
    std::vector<std::string> held = {std::string(lease.status().message())};
    for (size_t i = 1; i < candidates.size() && !lease.ok(); ++i) {
      wanted = {candidates[i]};
      lease = device::AcquireCores(root, rt->core_map_, wanted, device::CurrentProcessOwner());
      if (!lease.ok()) held.push_back(std::string(lease.status().message()));
    }
    if (!lease.ok()) {
      return RtError(NRT_RESOURCE, absl::StrCat("every visible NeuronCore is held: ",
                                                absl::StrJoin(held, "; ")));
    }
  }
  if (!lease.ok()) {
    return RtError(NRT_RESOURCE, std::string(lease.status().message()));
  }
  rt->lease_ = std::move(*lease);

  const uint64_t hbm = device::HbmBytesPerLogicalCore(**instance, rt->core_map_);
  for (int id : wanted) {
    device::HbmArena::Options arena_options;
    arena_options.name = absl::StrFormat("nc%d", id);
    arena_options.capacity = hbm;
    absl::StatusOr<std::unique_ptr<device::HbmArena>> arena =
        device::HbmArena::Create(arena_options);
    if (!arena.ok()) return RtError(NRT_RESOURCE, std::string(arena.status().message()));
    rt->cores_.push_back(std::make_unique<Core>(rt->core_map_.Core(id), std::move(*arena),
                                                rt->tree_.get(), rt->resolution_.config));
  }
  rt->core_ids_ = wanted;
  NEURON_LOG(NRT, kInfo, "initialized on %s, NeuronCores %s (LNC %d)", (*instance)->name,
             FormatRangeList(wanted), cfg.logical_nc_config);
  return rt;
}

Runtime::~Runtime() {
  cores_.clear();  // flushes counters while the tree is still open
  lease_.reset();
}

absl::StatusOr<Core*> Runtime::GetCore(int logical_id) {
  for (size_t i = 0; i < core_ids_.size(); ++i) {
    if (core_ids_[i] == logical_id) return cores_[i].get();
  }
  return RtError(NRT_INVALID, absl::StrFormat("NeuronCore %d is not held by this runtime (held: %s)",
                                              logical_id, FormatRangeList(core_ids_)));
}

absl::StatusOr<std::unique_ptr<TensorBuffer>> Runtime::AllocateTensor(int core, uint64_t size,
                                                                      const std::string& name) {
  absl::StatusOr<Core*> c = GetCore(core);
  if (!c.ok()) return c.status();
  return TensorBuffer::AllocateDevice(*c, size, name);
}

}  // namespace neuron::runtime
