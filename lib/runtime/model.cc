// Executing a loaded model: admission (NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS),
// one execution at a time per core, the NEURON_RT_EXEC_TIMEOUT deadline,
// stochastic rounding, numerical-error reporting and the device counters.
#include "lib/runtime/model.h"

#include <chrono>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/log/log.h"
#include "lib/runtime/core.h"
#include "lib/runtime/device_print_sink.h"
#include "lib/runtime/model_state.h"
#include "lib/runtime/numerics.h"
#include "lib/runtime/observe.h"
#include "lib/runtime/status.h"
#include "lib/runtime/tensor_buffer.h"

namespace neuron::runtime {

Model::Model(std::unique_ptr<ModelState> state) : state_(std::move(state)) {
  ObserveLoad(*state_);
}

Model::~Model() {
  if (state_ == nullptr) return;
  // Wait for an execution in progress on this core before freeing.
  std::lock_guard<std::mutex> lock(state_->core->exec_mutex());
  for (const device::HbmBlock& b : state_->blocks) state_->core->Free(b);
  state_->core->Flush(/*force=*/true);
  ObserveUnload(*state_);
}

int Model::core_id() const { return state_->core->id(); }
const std::string& Model::name() const { return state_->name; }
const std::vector<TensorInfo>& Model::inputs() const { return state_->inputs; }
const std::vector<TensorInfo>& Model::outputs() const { return state_->outputs; }
const LoadTimings& Model::timings() const { return state_->timings; }
const LoadCost& Model::cost() const { return state_->cost; }
const std::string& Model::target() const { return state_->target; }
std::optional<size_t> Model::debug_info_entries() const {
  if (!state_->debug_info.has_value()) return std::nullopt;
  return state_->debug_info->size();
}

namespace {

absl::Status CheckTensors(const std::vector<TensorInfo>& infos, size_t given, const char* kind,
                          const std::function<const TensorBuffer*(size_t)>& at) {
  if (given != infos.size()) {
    return RtError(NRT_INVALID, absl::StrFormat("the model has %d %ss, %d were given",
                                                infos.size(), kind, given));
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    const TensorBuffer* t = at(i);
    if (t == nullptr) {
      return RtError(NRT_INVALID, absl::StrFormat("%s #%d ('%s') is missing", kind, i,
                                                  infos[i].name));
    }
    if (t->size() < infos[i].bytes) {
      return RtError(NRT_INVALID,
                     absl::StrFormat("%s #%d ('%s') needs %d bytes, tensor '%s' has %d", kind, i,
                                     infos[i].name, infos[i].bytes, t->name(), t->size()));
    }
  }
  return absl::OkStatus();
}

const char* VerbosityName(config::NumericalVerbosity v) {
  switch (v) {
    case config::NumericalVerbosity::kNone: return "none";
    case config::NumericalVerbosity::kCritical: return "critical";
    case config::NumericalVerbosity::kDebug: return "debug";
    case config::NumericalVerbosity::kVerbose: return "verbose";
  }
  return "none";
}

// The outputs' contents changed, and so did those of any input whose
// memory an output shares (a donated buffer, a view of it).
// An output that is an input passed through in its own bytes was not
// written: its version (and what kernels derived from it, such as a
// convolution's reordered weights) stays valid for the next run.
void TouchWritten(const kernels::Executable& executable, const std::vector<const TensorBuffer*>& inputs,
                  const std::vector<TensorBuffer*>& outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    const TensorBuffer* out = outputs[k];
    const int from = executable.PassedThroughInput(k);
    if (from >= 0 && static_cast<size_t>(from) < inputs.size() && inputs[from]->data() == out->data() &&
        inputs[from]->size() == out->size()) {
      continue;
    }
    out->Touch();
    const auto* o = static_cast<const char*>(out->data());
    for (const TensorBuffer* in : inputs) {
      const auto* i = static_cast<const char*>(in->data());
      if (i < o + out->size() && o < i + in->size()) in->Touch();
    }
  }
}

}  // namespace

// GetRngSeed's value: a new one per execution of a model, the same
// sequence in every process (runs are reproducible).
static uint64_t NextRngSeed(std::atomic<uint64_t>& draws) {
  uint64_t x = (draws.fetch_add(1, std::memory_order_relaxed) + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 31);
}

absl::StatusOr<ExecuteResult> Model::Execute(const std::vector<const TensorBuffer*>& inputs,
                                             const std::vector<TensorBuffer*>& outputs,
                                             const ExecuteOptions& options) {
  ModelState& s = *state_;
  Core& core = *s.core;
  if (absl::Status st = CheckTensors(s.inputs, inputs.size(), "input",
                                     [&](size_t i) { return inputs[i]; });
      !st.ok()) {
    core.CountExecution(NRT_EXEC_BAD_INPUT, 0);
    return st;
  }
  if (absl::Status st = CheckTensors(s.outputs, outputs.size(), "output",
                                     [&](size_t i) { return outputs[i]; });
      !st.ok()) {
    core.CountExecution(NRT_EXEC_BAD_INPUT, 0);
    return st;
  }
  if (absl::Status st = core.Admit(options.nonblocking); !st.ok()) return st;

  const config::RuntimeConfig& cfg = *s.config;
  // FAIL_ON_NAN forces at least critical (config resolution does it too).
  config::NumericalVerbosity verbosity = cfg.numerical_errors_verbosity;
  if (cfg.fail_on_nan && verbosity == config::NumericalVerbosity::kNone) {
    verbosity = config::NumericalVerbosity::kCritical;
  }

  std::vector<kernels::Tensor> in;
  in.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(kernels::Tensor::Borrow(s.inputs[i].shape.type, s.inputs[i].shape.dims,
                                         const_cast<void*>(inputs[i]->data())));
  }
  std::vector<kernels::Tensor> out;
  out.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    // The address only: TouchWritten says which outputs the run wrote,
    // after it.
    out.push_back(kernels::Tensor::Borrow(s.outputs[i].shape.type, s.outputs[i].shape.dims,
                                          outputs[i]->address()));
  }

  // Kernels may reuse what they derived from an input whose version they
  // saw before (a convolution's reordered weights).
  std::vector<uint64_t> versions(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) versions[i] = inputs[i]->version();

  kernels::ExecOptions exec;
  exec.input_versions = versions;
  exec.threads = s.threads;
  exec.stochastic_rounding = cfg.stochastic_rounding_en;
  exec.sr_seed = cfg.stochastic_rounding_seed;
  exec.rng_seed = NextRngSeed(s.rng_draws);
  exec.collectives = options.collectives;
  exec.replica_id = options.replica_id;
  exec.replica_count = options.replica_count;
  exec.feed = options.feed;
  // Without the debug map there is nothing to name the instruction with.
  const bool name_first = verbosity >= config::NumericalVerbosity::kDebug;
  exec.find_first_nonfinite = name_first && s.debug_info.has_value();
  if (cfg.exec_timeout_s > 0) {
    exec.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(cfg.exec_timeout_s);
  }
  DevicePrintSink printer(core.id(), cfg.gpsimd_stdout_queue_size);
  exec.printer = printer.idle() ? nullptr : &printer;
  ExecutionObserver observe(s, inputs, outputs);
  exec.observer = observe.steps();
  kernels::RunStats stats;
  absl::Status run;
  const auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(core.exec_mutex());
    observe.RunBegin();
    run = s.executable->Run(in, &out, exec, &stats);
    observe.RunEnd();
    ++s.executions;
  }
  TouchWritten(*s.executable, inputs, outputs);
  const uint64_t nanos = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                           start)
          .count());
  core.Release();
  printer.Flush();

  if (!run.ok()) {
    NRT_STATUS code = NRT_FAILURE;
    std::string message;
    if (run.code() == absl::StatusCode::kDeadlineExceeded &&
        absl::StartsWith(run.message(), "NRT_TIMEOUT: ")) {
      // A collective gave up on a lost peer: say which (its own message).
      code = NRT_TIMEOUT;
      message = absl::StrFormat("execution of model '%s' on nc%d failed: %s", s.name, core.id(),
                                std::string(run.message()));
    } else if (run.code() == absl::StatusCode::kDeadlineExceeded) {
      code = NRT_TIMEOUT;
      message = absl::StrFormat(
          "execution of model '%s' on nc%d exceeded NEURON_RT_EXEC_TIMEOUT=%d s and was stopped",
          s.name, core.id(), cfg.exec_timeout_s);
    } else if (run.code() == absl::StatusCode::kInvalidArgument) {
      code = NRT_EXEC_BAD_INPUT;
      message = absl::StrFormat("model '%s': %s", s.name, std::string(run.message()));
    } else {
      message = absl::StrFormat("execution of model '%s' on nc%d failed: %s", s.name, core.id(),
                                std::string(run.message()));
    }
    core.CountExecution(code, nanos);
    observe.Finish(code, /*failed=*/true, message, "");
    return RtError(code, message);
  }
  // Outputs the executable did not write in place (it replaced a borrowed
  // tensor with its own storage) are copied back.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (out[i].data() != outputs[i]->address()) {
      std::memcpy(outputs[i]->data(), out[i].data(),
                  std::min<size_t>(out[i].byte_size(), outputs[i]->size()));
    }
  }

  ExecuteResult result;
  result.nanos = nanos;
  result.loop_trips = stats.loop_trips;
  result.loop_ns = stats.loop_ns;
  if (verbosity != config::NumericalVerbosity::kNone) {
    std::string where;
    int64_t nan = 0, inf = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const TensorInfo& info = s.outputs[i];
      NonFiniteCount c = CountNonFinite(info.shape.type, outputs[i]->address(),
                                        info.shape.ElementCount().value_or(0));
      if (!c.any()) continue;
      nan += c.nan;
      inf += c.inf;
      if (!where.empty()) where += ", ";
      where += absl::StrFormat("'%s' (#%d)", info.name, i);
      if (verbosity == config::NumericalVerbosity::kVerbose) {
        where += absl::StrFormat(" [%d NaN, %d Inf, first at element %d]", c.nan, c.inf,
                                 c.first_index);
      }
    }
    if (!where.empty()) {
      result.status = NRT_EXEC_COMPLETED_WITH_NUM_ERR;
      result.numerical_report = absl::StrFormat(
          "Numerical error (NaN/Inf) in the result of model '%s' on nc%d: output %s", s.name,
          core.id(), where);
      if (name_first && !s.debug_info.has_value()) {
        absl::StrAppend(&result.numerical_report, "; first produced by ", kDebugInfoOff);
      } else if (name_first && !stats.first_nonfinite_instruction.empty()) {
        std::string what = s.debug_info->Describe(stats.first_nonfinite_instruction);
        if (what.empty()) what = absl::StrCat("step '", stats.first_nonfinite_instruction, "'");
        absl::StrAppend(&result.numerical_report, "; first produced by ", what);
      }
      result.fail = cfg.fail_on_nan;
      // A failure is the caller's to report; otherwise this is the report.
      if (!result.fail) {
        NEURON_LOG(NRT, kWarn, "%s (NEURON_RT_NUMERICAL_ERRORS_VERBOSITY=%s)",
                   result.numerical_report, VerbosityName(verbosity));
      }
      (void)nan;
      (void)inf;
    }
  }
  core.CountExecution(result.status, nanos);
  observe.Finish(result.status, result.fail, result.numerical_report,
                 stats.first_nonfinite_instruction);
  return result;
}

}  // namespace neuron::runtime
