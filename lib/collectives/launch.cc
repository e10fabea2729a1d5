#include "lib/collectives/launch.h"

#include "absl/strings/str_cat.h"
#include "lib/collectives/job_secret.h"
#include "lib/support/parse.h"

namespace neuron::collectives {

absl::StatusOr<std::optional<Launch>> LaunchFromEnv(const config::EnvLookup& env) {
  struct Source { const char* rank; const char* size; const char* via; };
  static constexpr Source kSources[] = {
      {"NEURON_RANK", "NEURON_WORLD_SIZE", "NEURON_RANK"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM"},
  };
  for (const Source& s : kSources) {
    const std::optional<std::string> rank = env(s.rank), size = env(s.size);
    if (!rank && !size) continue;
    if (!rank || !size) {
      return absl::InvalidArgumentError(absl::StrCat(
          rank ? s.size : s.rank, " is not set but ", rank ? s.rank : s.size,
          " is: set both"));
    }
    auto r = ParseUnsigned(*rank, 1u << 20);
    if (!r.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(s.rank, "='", *rank, "': ", r.status().message()));
    }
    auto w = ParseUnsigned(*size, 1u << 20);
    if (!w.ok() || *w == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(s.size, "='", *size, "': expected a world size of 1 or more"));
    }
    if (*r >= *w) {
      return absl::InvalidArgumentError(absl::StrCat(
          s.rank, "=", *r, " is outside ", s.size, "=", *w, " (0..", *w - 1, ")"));
    }
    return Launch{static_cast<int>(*r), static_cast<int>(*w), s.via};
  }
  return std::optional<Launch>();
}

CommOptions OptionsFromConfig(const config::RuntimeConfig& c,
                              const config::EnvLookup& env) {
  CommOptions o;
  o.root_comm_id = c.root_comm_id;
  o.timeout_s = c.exec_timeout_s;
  o.chunk_bytes = c.cc_chunk_size;
  o.channel_buffers = c.cc_channel_buffer_n;
  o.stream_split[0] = c.cc_stream_split_w0;
  o.stream_split[1] = c.cc_stream_split_w1;
  // Resolution already forces REGISTER_HBM_MR off without MAP_HBM.
  o.register_device_memory = c.register_hbm_mr && c.map_hbm;
  o.p2p_registration = c.enable_p2p;
  o.validate_groups = c.enable_rg_validation;
  o.hw_barrier = c.enable_hw_execution_barrier;
  o.one_thread_per_core = c.one_thread_per_core;
  o.ranks_per_proxy = c.ranks_per_network_proxy;
  o.cpu_affinity = c.low_latency_tasks_cpu_affinity;
  if (auto addr = env("NEURON_HOST_ADDR")) o.host_addr = *addr;
  absl::StatusOr<std::string> secret = JobSecretFromEnv(env);
  if (secret.ok()) o.secret = *secret;
  else o.secret_error = std::string(secret.status().message());
  return o;
}

}  // namespace neuron::collectives
