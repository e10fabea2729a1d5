#include "lib/runtime/observe.h"

#include <stdlib.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/dump/core_dump.h"
#include "lib/dump/handoff.h"
#include "lib/dump/identity.h"
#include "lib/dump/input_dump.h"
#include "lib/dump/memlog.h"
#include "lib/hlo/literal.h"
#include "lib/log/log.h"
#include "lib/neff/header.h"
#include "lib/profile/profiler.h"
#include "lib/runtime/cli_npy.h"
#include "lib/runtime/core.h"
#include "lib/runtime/model_state.h"
#include "lib/runtime/tensor_buffer.h"

namespace neuron::runtime {
namespace {

bool CoreDumpsWanted(const config::RuntimeConfig& cfg) {
  return cfg.core_dump_enabled &&
         (!cfg.local_core_dump_directory.empty() ||
          (cfg.s3_core_dump_prefix.has_value() && !cfg.s3_core_dump_prefix->empty()));
}

// Failures of the execution itself (not of the caller's arguments).
bool CoreDumpStatus(NRT_STATUS status) {
  return status != NRT_SUCCESS && status != NRT_INVALID && status != NRT_EXEC_BAD_INPUT &&
         status != NRT_QUEUE_FULL;
}

std::string Absolute(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

}  // namespace

ExecutionObserver::ExecutionObserver(ModelState& state,
                                     const std::vector<const TensorBuffer*>& inputs,
                                     const std::vector<TensorBuffer*>& outputs)
    : s_(state), inputs_(inputs), outputs_(outputs) {
  const config::RuntimeConfig& cfg = *s_.config;
  track_position_ = CoreDumpsWanted(cfg);
  profiler_ = profile::Profiler::ForConfig(cfg);
  if (profiler_ != nullptr) {
    profile::ExecutionInfo info;
    info.model = s_.name;
    info.neff_uuid = neff::FormatUuid(s_.neff.header.uuid);
    info.device = s_.core->placement().device;
    info.core = s_.core->id();
    info.module = s_.program.module.get();
    for (size_t i = 0; i < s_.inputs.size(); ++i)
      info.inputs.emplace_back(s_.inputs[i].name, s_.inputs[i].bytes);
    for (size_t i = 0; i < s_.outputs.size(); ++i)
      info.outputs.emplace_back(s_.outputs[i].name, s_.outputs[i].bytes);
    capture_ = profiler_->Begin(info);
  }
  active_ = track_position_ || capture_ != nullptr;
}

ExecutionObserver::~ExecutionObserver() = default;

void ExecutionObserver::RunBegin() {
  if (capture_) capture_->RunBegin();
}

void ExecutionObserver::RunEnd() {
  if (capture_) capture_->RunEnd();
}

void ExecutionObserver::StepBegin(const std::string& instruction) {
  if (track_position_) {
    if (depth_ < kMaxDepth) stack_[depth_] = &instruction;
    ++depth_;
    ++steps_started_;
    last_was_begin_ = true;
  }
  if (capture_) capture_->StepBegin(instruction);
}

void ExecutionObserver::StepEnd(const std::string& instruction) {
  if (track_position_) {
    // The position is the innermost step that last ran: a failure unwinds
    // through StepEnd calls with no StepBegin between them.
    if (last_was_begin_) {
      position_depth_ = std::min(depth_, kMaxDepth);
      std::copy(stack_, stack_ + position_depth_, position_);
    }
    last_was_begin_ = false;
    if (depth_ > 0) --depth_;
  }
  if (capture_) capture_->StepEnd(instruction);
}

void ExecutionObserver::Finish(NRT_STATUS status, bool failed, const std::string& message,
                               const std::string& first_nonfinite) {
  if (profiler_ != nullptr && capture_ != nullptr) {
    profiler_->End(std::move(capture_), failed,
                   failed ? absl::StrCat(nrt_get_status_name(status), ": ", message)
                          : std::string(nrt_get_status_name(status)));
  }
  const config::RuntimeConfig& cfg = *s_.config;
  const bool inputs = dump::WantsInputDump(cfg.dbg_dump_inputs_on_err, status, failed);
  const bool core = failed && CoreDumpStatus(status) && CoreDumpsWanted(cfg);
  if (!inputs && !core) return;
  WriteDumps(status, failed, message, first_nonfinite);
}

void ExecutionObserver::WriteDumps(NRT_STATUS status, bool failed, const std::string& message,
                                   const std::string& first_nonfinite) {
  const config::RuntimeConfig& cfg = *s_.config;
  dump::Memlog& memlog = dump::Memlog::Global();
  memlog.SetCapacity(cfg.debug_memlog_max_size);
  memlog.Append(absl::StrFormat("NRT: nrt_execute of model '%s' on nc%d: %s: %s", s_.name,
                                s_.core->id(), nrt_get_status_name(status), message));

  dump::FailedExecution f;
  f.model = s_.name;
  f.neff_name = s_.neff.header.name;
  f.neff_uuid = neff::FormatUuid(s_.neff.header.uuid);
  f.neff_path = Absolute(s_.path);
  f.neff_build_version = s_.neff.header.build_version;
  f.device = s_.core->placement().device;
  f.core = s_.core->id();
  f.status = status;
  f.error = message;
  f.execution_index = s_.executions == 0 ? 0 : s_.executions - 1;
  for (int i = 0; i < position_depth_; ++i) f.program_stack.push_back(*position_[i]);
  f.steps_started = steps_started_;
  f.program_completed = status == NRT_EXEC_COMPLETED_WITH_NUM_ERR;
  f.first_nonfinite_instruction = first_nonfinite;
  if (status == NRT_EXEC_COMPLETED_WITH_NUM_ERR) f.replay_env.push_back("NEURON_FAIL_ON_NAN=1");
  if (status == NRT_TIMEOUT)
    f.replay_env.push_back(absl::StrCat("NEURON_RT_EXEC_TIMEOUT=", cfg.exec_timeout_s));
  for (size_t i = 0; i < s_.inputs.size() && i < inputs_.size(); ++i) {
    const TensorInfo& info = s_.inputs[i];
    dump::DumpTensor t;
    t.role = "input";
    t.name = info.name;
    t.position = info.position;
    t.dtype = std::string(hlo::ElementTypeName(info.shape.type));
    t.dims = info.shape.dims;
    t.data = static_cast<const uint8_t*>(inputs_[i]->data());
    t.bytes = info.bytes;
    f.tensors.push_back(std::move(t));
  }
  for (size_t i = 0; i < s_.outputs.size() && i < outputs_.size(); ++i) {
    const TensorInfo& info = s_.outputs[i];
    dump::DumpTensor t;
    t.role = "output";
    t.name = info.name;
    t.position = info.position;
    t.dtype = std::string(hlo::ElementTypeName(info.shape.type));
    t.dims = info.shape.dims;
    t.data = static_cast<const uint8_t*>(outputs_[i]->data());
    t.bytes = info.bytes;
    f.tensors.push_back(std::move(t));
  }
  const dump::DumpIdentity id = dump::CurrentIdentity();

  if (dump::WantsInputDump(cfg.dbg_dump_inputs_on_err, status, failed)) {
    size_t k = 0;
    for (dump::DumpTensor& t : f.tensors) {
      if (t.role != "input") continue;
      hlo::Literal value = hlo::Literal::Zeros(s_.inputs[k++].shape);
      if (value.data().size() == t.bytes && t.bytes > 0)
        std::memcpy(value.mutable_data().data(), t.data, t.bytes);
      t.npy = NpyBytes(value);
    }
    absl::StatusOr<std::string> dir =
        dump::WriteInputDump(cfg.dbg_input_dump_directory, f, id);
    if (dir.ok()) {
      NEURON_LOG(NRT, kWarn, "inputs of the failing execution of model '%s' dumped to %s",
                 s_.name, *dir);
      memlog.Append(absl::StrCat("NRT: input dump written to ", *dir));
    } else {
      NEURON_LOG(NRT, kError, "input dump of model '%s' failed: %s", s_.name,
                 std::string(dir.status().message()));
    }
  }

  if (!(failed && CoreDumpStatus(status) && CoreDumpsWanted(cfg))) return;
  const std::string s3 =
      cfg.s3_core_dump_prefix.has_value() ? dump::ExpandPathTemplate(*cfg.s3_core_dump_prefix, id)
                                          : "";
  std::string dir = dump::ExpandPathTemplate(cfg.local_core_dump_directory, id);
  bool staged = false;
  if (dir.empty()) {  // S3 only: stage in a temporary directory
    char templ[] = "/tmp/neuron-core-dump-staging-XXXXXX";
    if (mkdtemp(templ) == nullptr) {
      NEURON_LOG(NRT, kError, "core dump not written: cannot create a staging directory: %s",
                 std::strerror(errno));
      return;
    }
    dir = templ;
    staged = true;
  }
  dump::CoreDumpOptions options;
  options.settings = {
      {"NEURON_RT_EXEC_TIMEOUT", absl::StrCat(cfg.exec_timeout_s)},
      {"NEURON_FAIL_ON_NAN", cfg.fail_on_nan ? "1" : "0"},
      {"NEURON_RT_DEBUG_MEMLOG_MAX_SIZE", absl::StrCat(cfg.debug_memlog_max_size)},
      {"NEURON_RT_STOCHASTIC_ROUNDING_EN", cfg.stochastic_rounding_en ? "1" : "0"},
  };
  memlog.Append(absl::StrCat("NRT: core dump of nc", f.core, " to ", dir));
  options.memlog = memlog.Snapshot();
  absl::StatusOr<std::vector<std::string>> written = dump::WriteCoreDump(dir, f, id, options);
  if (!written.ok()) {
    NEURON_LOG(NRT, kError, "core dump of model '%s' failed: %s", s_.name,
               std::string(written.status().message()));
    return;
  }
  // The default location is the real runtime's: quiet there (INFO), loud when chosen.
  if (cfg.local_core_dump_directory == config::RuntimeConfig().local_core_dump_directory) {
    NEURON_LOG(NRT, kInfo, "core dump of nc%d written to %s", f.core, written->front());
  } else {
    NEURON_LOG(NRT, kWarn, "core dump of nc%d written to %s", f.core, written->front());
  }
  if (s3.empty()) return;
  const std::string program = dump::FindNeuronDump();
  if (program.empty()) {
    NEURON_LOG(NRT, kError,
               "NEURON_RT_S3_CORE_DUMP_PREFIX is set but neuron-dump was not found; the dump "
               "stays in %s",
               dir);
    return;
  }
  std::vector<std::string> env;
  if (staged) env.push_back(absl::StrCat(dump::kStagedEnv, "=", dir));
  absl::Status ran = dump::RunProgram(program, dump::HandoffArgs(f, id, dir, s3), env);
  if (!ran.ok()) {
    NEURON_LOG(NRT, kError, "hand-off of the core dump to neuron-dump failed: %s; the dump stays in %s",
               std::string(ran.message()), dir);
  }
}

void ObserveUnload() { profile::Profiler::FlushAll(); }

}  // namespace neuron::runtime
