#include "lib/runtime/observe.h"

#include <stdlib.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/dump/core_dump.h"
#include "lib/dump/handoff.h"
#include "lib/dump/identity.h"
#include "lib/dump/input_dump.h"
#include "lib/dump/memlog.h"
#include "lib/hlo/literal.h"
#include "lib/hlo/opcode.h"
#include "lib/log/log.h"
#include "lib/neff/header.h"
#include "lib/profile/profiler.h"
#include "lib/profile/sys_trace.h"
#include "lib/literal_io/npy_literal.h"
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

// The collective instructions of each loaded model, found once (only when
// the system trace wants "cc_running"), dropped at unload.
std::mutex g_collectives_mu;
std::map<const ModelState*, std::shared_ptr<const std::unordered_set<std::string>>>
    g_collectives;  // guarded by g_collectives_mu

std::shared_ptr<const std::unordered_set<std::string>> CollectivesOf(const ModelState& s) {
  std::lock_guard<std::mutex> lock(g_collectives_mu);
  auto& entry = g_collectives[&s];
  if (entry == nullptr) {
    auto names = std::make_shared<std::unordered_set<std::string>>();
    if (s.program.module != nullptr) {
      for (const hlo::Computation* comp : s.program.module->computations())
        for (const hlo::Instruction* instr : comp->instructions())
          if (hlo::IsCollective(instr->opcode())) names->insert(instr->name());
    }
    entry = std::move(names);
  }
  return entry;
}

uint64_t ModelDeviceBytes(const ModelState& s) {
  uint64_t bytes = 0;
  for (const device::HbmBlock& b : s.blocks) bytes += b.size;
  return bytes;
}

void RecordModelMemory(const ModelState& s, bool alloc) {
  profile::MemoryEvent m;
  m.device = s.core->placement().device;
  m.core = s.core->id();
  m.name = absl::StrCat("model ", s.name);
  m.bytes = ModelDeviceBytes(s);
  m.alloc = alloc;
  m.at_ns = profile::NowNs();
  profile::Profiler::RecordMemoryAll(m);
}

}  // namespace

ExecutionObserver::ExecutionObserver(ModelState& state,
                                     const std::vector<const TensorBuffer*>& inputs,
                                     const std::vector<TensorBuffer*>& outputs)
    : s_(state), inputs_(inputs), outputs_(outputs) {
  const config::RuntimeConfig& cfg = *s_.config;
  track_position_ = CoreDumpsWanted(cfg);
  begin_ns_ = profile::NowNs();
  sys_exec_ = profile::SysTraceWanted("exec");
  if (profile::SysTraceWanted("cc_running")) {
    collectives_ = CollectivesOf(s_);
    if (collectives_->empty()) collectives_.reset();
  }
  std::vector<std::shared_ptr<profile::Profiler>> profilers =
      profile::Profiler::ForExecution(cfg);
  if (!profilers.empty()) {
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
    info.model_key = &s_.timings;  // what ProfileKey(model) gives
    for (auto& p : profilers) {
      std::unique_ptr<profile::Capture> capture = p->Begin(info);
      if (capture != nullptr) captures_.emplace_back(std::move(p), std::move(capture));
    }
  }
  active_ = track_position_ || !captures_.empty() || collectives_ != nullptr;
}

ExecutionObserver::~ExecutionObserver() = default;

void ExecutionObserver::RunBegin() {
  run_begin_ns_ = profile::NowNs();
  for (auto& [p, c] : captures_) c->RunBegin();
}

void ExecutionObserver::RunEnd() {
  run_end_ns_ = profile::NowNs();
  for (auto& [p, c] : captures_) c->RunEnd();
}

void ExecutionObserver::StepBegin(const std::string& instruction) {
  if (track_position_) {
    if (depth_ < kMaxDepth) stack_[depth_] = &instruction;
    ++depth_;
    ++steps_started_;
    last_was_begin_ = true;
  }
  for (auto& [p, c] : captures_) c->StepBegin(instruction);
  if (collectives_ != nullptr && collectives_->count(instruction))
    cc_open_.emplace_back(&instruction, profile::NowNs());
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
  for (auto& [p, c] : captures_) c->StepEnd(instruction);
  if (!cc_open_.empty() && *cc_open_.back().first == instruction) {
    profile::SysEvent e;
    e.type = "cc_running";
    e.name = instruction;
    e.core = s_.core->id();
    e.begin_ns = cc_open_.back().second;
    e.end_ns = profile::NowNs();
    e.args = {{"model", s_.name}};
    cc_open_.pop_back();
    profile::RecordSysEvent(std::move(e));
  }
}

void ExecutionObserver::Finish(NRT_STATUS status, bool failed, const std::string& message,
                               const std::string& first_nonfinite) {
  if (!captures_.empty()) {
    const std::string text = failed ? absl::StrCat(nrt_get_status_name(status), ": ", message)
                                    : std::string(nrt_get_status_name(status));
    for (auto& [p, c] : captures_) p->End(std::move(c), failed, text);
    captures_.clear();
  }
  if (sys_exec_) {
    profile::SysEvent e;
    e.type = "exec";
    e.name = "execute";
    e.core = s_.core->id();
    e.begin_ns = begin_ns_;
    e.end_ns = profile::NowNs();
    e.args = {{"model", s_.name},
              {"status", nrt_get_status_name(status)},
              {"failed", failed},
              {"run_begin_ns", run_begin_ns_},
              {"run_end_ns", run_end_ns_}};
    profile::RecordSysEvent(std::move(e));
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
    t.data = static_cast<const uint8_t*>(outputs_[i]->address());
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
      t.npy = literal_io::NpyBytes(value);
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

void ObserveLoad(const ModelState& s) {
  if (profile::SysTraceWanted("load")) {
    profile::SysEvent e;
    e.type = "load";
    e.name = "model_load";
    e.core = s.core->id();
    e.end_ns = profile::NowNs();
    e.begin_ns = e.end_ns - static_cast<int64_t>(s.timings.total_ms * 1e6);
    e.args = {{"model", s.name},
              {"device_bytes", ModelDeviceBytes(s)},
              {"inputs", s.inputs.size()},
              {"outputs", s.outputs.size()}};
    profile::RecordSysEvent(std::move(e));
  }
  RecordModelMemory(s, /*alloc=*/true);
  // The weights and the program went to the device during the load.
  if (profile::Profiler::DmaWanted(*s.config)) {
    profile::DmaTransfer t;
    t.device = s.core->placement().device;
    t.core = s.core->id();
    t.name = absl::StrCat("weights of model '", s.name, "'");
    t.bytes = s.cost.weights + s.cost.model_code;
    t.end_ns = profile::NowNs();
    t.begin_ns = t.end_ns - static_cast<int64_t>(s.timings.total_ms * 1e6);
    profile::Profiler::RecordDmaAll(*s.config, t);
  }
}

void ObserveUnload(const ModelState& s) {
  if (profile::SysTraceWanted("unload")) {
    profile::SysEvent e;
    e.type = "unload";
    e.name = "model_unload";
    e.core = s.core->id();
    e.begin_ns = e.end_ns = profile::NowNs();
    e.args = {{"model", s.name}, {"device_bytes", ModelDeviceBytes(s)}};
    profile::RecordSysEvent(std::move(e));
  }
  RecordModelMemory(s, /*alloc=*/false);
  {
    std::lock_guard<std::mutex> lock(g_collectives_mu);
    g_collectives.erase(&s);
  }
  ObserveUnload();
}

TensorOpScope::TensorOpScope(const char* op, const TensorBuffer* a, const TensorBuffer* b,
                             uint64_t bytes)
    : op_(op), bytes_(bytes) {
  const bool a_dev = a != nullptr && a->on_device(), b_dev = b != nullptr && b->on_device();
  // Which side is the device in a host<->device copy (a: the destination).
  const std::string_view name(op);
  if (a_dev && (name == "tensor_write" || (name == "tensor_copy" && b != nullptr && !b_dev))) {
    dma_tensor_ = a;
    to_device_ = true;
  } else if (a_dev && name == "tensor_read") {
    dma_tensor_ = a;
  } else if (b_dev && name == "tensor_copy" && !a_dev) {
    dma_tensor_ = b;
  }
  if (dma_tensor_ != nullptr && !profile::Profiler::DmaWanted(dma_tensor_->core()->config()))
    dma_tensor_ = nullptr;
  if (profile::SysTraceWanted("tensor")) tensor_ = a_dev ? a : b_dev ? b : nullptr;
  if (tensor_ != nullptr || dma_tensor_ != nullptr) begin_ns_ = profile::NowNs();
}

TensorOpScope::~TensorOpScope() {
  if (dma_tensor_ != nullptr) {
    profile::DmaTransfer t;
    t.device = dma_tensor_->core()->placement().device;
    t.core = dma_tensor_->core_id();
    t.name = absl::StrCat(op_, " '", dma_tensor_->name(), "'");
    t.queue = to_device_ ? profile::DmaQueue::kHostToDevice : profile::DmaQueue::kDeviceToHost;
    t.bytes = bytes_;
    t.begin_ns = begin_ns_;
    t.end_ns = profile::NowNs();
    profile::Profiler::RecordDmaAll(dma_tensor_->core()->config(), t);
  }
  if (tensor_ == nullptr) return;
  profile::SysEvent e;
  e.type = "tensor";
  e.name = op_;
  e.core = tensor_->core_id();
  e.begin_ns = begin_ns_;
  e.end_ns = profile::NowNs();
  e.args = {{"tensor", tensor_->name()}, {"bytes", bytes_}};
  profile::RecordSysEvent(std::move(e));
}

// Model keeps its state private; the address of its timings is inside it,
// unique while the model is loaded.
const void* ProfileKey(const Model& model) { return &model.timings(); }

void ObserveDeviceMemory(const TensorBuffer& tensor, bool alloc) {
  const device::HbmBlock* block = tensor.block();
  if (!tensor.on_device() || block == nullptr) return;
  if (profile::SysTraceWanted("memory")) {
    profile::SysEvent e;
    e.type = "memory";
    e.name = alloc ? "device_alloc" : "device_free";
    e.core = tensor.core_id();
    e.begin_ns = e.end_ns = profile::NowNs();
    e.args = {{"tensor", tensor.name()}, {"bytes", block->size}};
    profile::RecordSysEvent(std::move(e));
  }
  profile::MemoryEvent m;
  m.device = tensor.core()->placement().device;
  m.core = tensor.core_id();
  m.name = tensor.name();
  m.bytes = block->size;
  m.alloc = alloc;
  m.at_ns = profile::NowNs();
  profile::Profiler::RecordMemoryAll(m);
}

void ObserveMemoryMetric(int core, device::MemoryCategory category, uint64_t bytes, bool alloc,
                         const CategoryMetrics& after) {
  if (!profile::SysTraceWanted("memory")) return;
  profile::SysEvent e;
  e.type = "memory";
  e.name = "memory_metric";
  e.core = core;
  e.begin_ns = e.end_ns = profile::NowNs();
  e.args = {{"category", device::MemoryCategoryName(category)},
            {"op", alloc ? "alloc" : "free"},
            {"bytes", bytes},
            {"in_use", after.in_use},
            {"allocs", after.allocs},
            {"frees", after.frees}};
  profile::RecordSysEvent(std::move(e));
}

}  // namespace neuron::runtime
