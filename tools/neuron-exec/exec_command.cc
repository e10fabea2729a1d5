#include "tools/neuron-exec/exec_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "lib/collectives/launch.h"
#include "lib/collectives/local_launch.h"
#include "lib/collectives/net.h"
#include "lib/config/config.h"
#include "lib/dump/files.h"
#include "lib/literal_io/literal_text.h"
#include "lib/literal_io/npy_literal.h"
#include "lib/nrt_client/loaded_model.h"
#include "lib/nrt_client/runtime_session.h"
#include "lib/program/dtype.h"
#include "lib/support/atomic_file.h"
#include "lib/support/cli.h"
#include "lib/support/host_memory.h"
#include "lib/support/parse.h"
#include "lib/support/progress.h"
#include "lib/tensorfile/bundle_writer.h"
#include "lib/tensorfile/tensor_file.h"
#include "neuron/nrt_status.h"
#include "nlohmann/json.hpp"
#include "tools/neuron-exec/file_feed.h"
#include "tools/neuron-exec/input_bundles.h"
#include "tools/neuron-exec/latency_plot.h"
#include "tools/neuron-exec/latency_stats.h"
#include "tools/neuron-exec/random_tensors.h"

namespace neuron::exec_tool {
namespace {

constexpr const char* kTool = "neuron-exec";
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using literal_io::ConvertTensor;
using literal_io::FormatTensor;
using literal_io::FormatTensorType;
using literal_io::LooksLikeInlineTensor;
using literal_io::NpyFileInput;
using literal_io::NpyStorageType;
using literal_io::OpenNpyFile;
using literal_io::ParseInlineTensor;
using literal_io::ReadNpyFile;
using literal_io::ReadNpyInto;
using literal_io::WriteNpyFile;
using nrt_client::LoadedModel;
using nrt_client::RuntimeSession;

int Error(const std::string& message) {
  PrintError(kTool, message);
  return kExitFailure;
}

// "<what> needs <need> of host memory, and <binding limit> leaves ..." when
// this process cannot take `need` more bytes of the host's memory.
absl::Status CheckHostMemory(uint64_t need, const std::string& what) {
  const HostMemoryReport report = ReadHostMemory();
  const HostMemoryLimit* binding = report.Binding();
  if (binding == nullptr || need <= binding->bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s needs %s of host memory, and %s (NRT_RESOURCE)", what, FormatBytes(need), DescribeLimit(*binding)));
}

std::string Describe(const nrt_client::TensorInfo& t) {
  return absl::StrFormat("#%d '%s' %s", t.position, t.name, FormatTensorType(t.shape));
}

std::string ListTensors(const std::vector<nrt_client::TensorInfo>& infos) {
  std::string out;
  for (const nrt_client::TensorInfo& t : infos) {
    if (!out.empty()) out += ", ";
    out += Describe(t);
  }
  return out.empty() ? "none" : out;
}

// Finds a tensor by "#k" or by name (a leading '%' is ignored).
absl::StatusOr<size_t> FindTensor(const std::vector<nrt_client::TensorInfo>& infos, std::string_view name,
                                  const char* kind) {
  if (!name.empty() && name[0] == '#') {
    char* end = nullptr;
    const std::string digits(name.substr(1));
    long k = std::strtol(digits.c_str(), &end, 10);
    if (!digits.empty() && *end == '\0' && k >= 0 && static_cast<size_t>(k) < infos.size()) {
      return static_cast<size_t>(k);
    }
  } else {
    if (!name.empty() && name[0] == '%') name.remove_prefix(1);
    for (size_t i = 0; i < infos.size(); ++i) {
      if (infos[i].name == name) return i;
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat("the model has no %s '%s' (%ss: %s)", kind,
                                                    std::string(name), kind, ListTensors(infos)));
}

json ShapeJson(const hlo::Shape& shape) { return json(shape.dims); }

// Where an input's values come from. Nothing large is read or drawn here:
// files and random values go straight into the device tensors once those
// exist (FillInputs), so an input is never held twice on the host.
struct BoundInput {
  std::string source;                 // "file", "inline", "random", "bundle"
  std::optional<hlo::Literal> value;  // inline values, and .npy read from a pipe
  std::optional<NpyFileInput> file;   // a regular .npy file, read into its tensor
  std::optional<BundleArray> bundle;  // an array of a bundle, read into its tensor
};

absl::Status WrongDims(const nrt_client::TensorInfo& info, const hlo::Shape& given) {
  return absl::InvalidArgumentError(absl::StrFormat("input %s: the value given is %s; the dimensions must match",
                                                    Describe(info), FormatTensorType(given)));
}

// --list-inputs: what a bundle must hold, one input a line (or JSON).
void PrintInputs(const LoadedModel& model, bool as_json) {
  if (as_json) {
    json list = json::array();
    for (const nrt_client::TensorInfo& t : model.inputs()) {
      list.push_back({{"position", t.position},
                      {"name", t.name},
                      {"path", InputPath(t)},
                      {"keys", t.path},
                      {"dtype", program::DtypeName(t.shape.type)},
                      {"shape", ShapeJson(t.shape)},
                      {"bytes", t.bytes}});
    }
    std::printf("%s\n", json{{"model", model.name()}, {"inputs", list}}.dump(2).c_str());
    return;
  }
  for (const nrt_client::TensorInfo& t : model.inputs()) {
    const std::string path = InputPath(t);
    std::printf("#%d\t%s\t%s\t%s\n", t.position, t.name.c_str(), path.empty() ? "-" : path.c_str(),
                FormatTensorType(t.shape).c_str());
  }
}

// An output's key in an outputs bundle: the pytree path of the input it
// lives in (a donated parameter: a train step's new state), "/"-joined as
// flax's flatten_dict writes it, so the bundle binds back to that input;
// else out<k>. HLO records no path for other results.
std::vector<std::string> OutputKeys(const LoadedModel& model) {
  std::vector<std::string> keys;
  std::set<std::string> taken;
  const std::vector<nrt_client::TensorInfo>& ins = model.inputs();
  for (size_t k = 0; k < model.outputs().size(); ++k) {
    const int in = model.outputs()[k].aliased_input;
    std::string key;
    if (in >= 0 && static_cast<size_t>(in) < ins.size() && !ins[in].path.empty()) {
      key = absl::StrJoin(ins[in].path, "/");
    }
    if (key.empty() || !taken.insert(key).second) key = absl::StrCat("out", k);
    keys.push_back(key);
  }
  return keys;
}

// --outputs: every result in one bundle (keys: OutputKeys).
absl::Status WriteOutputsBundle(const std::string& path, const LoadedModel& model,
                                const std::vector<hlo::Literal>& results) {
  // Standard output takes safetensors (a zip needs a file it can seek in).
  const std::optional<tensorfile::Format> format =
      path == "-" ? std::optional<tensorfile::Format>(tensorfile::Format::kSafetensors)
                  : tensorfile::BundleFormatOfName(path);
  if (!format) {
    return absl::InvalidArgumentError(absl::StrFormat("--outputs %s: name a .npz or .safetensors file", path));
  }
  const std::vector<std::string> keys = OutputKeys(model);
  std::vector<tensorfile::NamedArray> arrays;
  for (size_t k = 0; k < results.size(); ++k) {
    const std::vector<uint8_t>& bytes = results[k].data();
    arrays.push_back({keys[k], model.outputs()[k].shape.type, results[k].shape().dims,
                      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
  }
  return tensorfile::WriteBundle(path, *format, arrays);
}

// Binds every model input to its source; the error names what is wrong.
absl::StatusOr<std::vector<BoundInput>> BindInputs(const ExecRequest& request, const LoadedModel& model) {
  const std::vector<nrt_client::TensorInfo>& infos = model.inputs();
  std::vector<std::optional<BoundInput>> bound(infos.size());
  // Bundles first: an input given by name below overrides its array.
  std::vector<std::shared_ptr<const tensorfile::TensorFile>> bundles;
  for (const std::string& path : request.bundles) {
    if (path == "-" && request.neff_path == "-") {
      return absl::InvalidArgumentError("--input -: stdin already holds the model");
    }
    absl::StatusOr<std::unique_ptr<tensorfile::TensorFile>> file = tensorfile::TensorFile::Open(path);
    if (!file.ok()) return file.status();
    bundles.push_back(std::move(*file));
  }
  absl::StatusOr<std::vector<std::optional<BundleArray>>> arrays = BindBundles(bundles, infos);
  if (!arrays.ok()) return arrays.status();
  std::vector<bool> named(infos.size(), false);
  for (const NamedArg& arg : request.inputs) {
    absl::StatusOr<size_t> k = FindTensor(infos, arg.name, "input");
    if (!k.ok()) return k.status();
    if (named[*k]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("input %s is given twice", Describe(infos[*k])));
    }
    named[*k] = true;
    const nrt_client::TensorInfo& info = infos[*k];
    BoundInput in;
    absl::StatusOr<hlo::Literal> value;
    // Text with '=' that names no file is a tensor written inline, even a
    // malformed one: its parser says what is wrong with it.
    std::error_code exists_error;
    const bool inline_text =
        LooksLikeInlineTensor(arg.value) ||
        (arg.value.find('=') != std::string::npos &&
         !std::filesystem::exists(arg.value, exists_error));
    if (inline_text) {
      value = ParseInlineTensor(arg.value);
      in.source = "inline";
    } else {
      if (arg.value == "-" && request.neff_path == "-") {
        return absl::InvalidArgumentError(
            absl::StrFormat("input '%s': stdin already holds the model", arg.name));
      }
      in.source = "file";
      absl::StatusOr<NpyFileInput> file = OpenNpyFile(arg.value);
      if (file.ok()) {
        if (file->dims != info.shape.dims) return WrongDims(info, hlo::Shape::Array(file->type, file->dims));
        in.file = std::move(*file);
        bound[*k] = std::move(in);
        continue;
      }
      // A pipe or stdin cannot be read twice: read it whole now.
      value = absl::IsFailedPrecondition(file.status()) ? ReadNpyFile(arg.value) : file.status();
    }
    if (!value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("input '%s': %s", arg.name, std::string(value.status().message())));
    }
    if (value->shape().dims != info.shape.dims) return WrongDims(info, value->shape());
    in.value = ConvertTensor(*value, info.shape.type);
    bound[*k] = std::move(in);
  }
  std::vector<BoundInput> out;
  std::vector<size_t> unbound;
  for (size_t k = 0; k < infos.size(); ++k) {
    if (bound[k].has_value()) {
      out.push_back(std::move(*bound[k]));
    } else if ((*arrays)[k].has_value()) {
      out.push_back({"bundle", std::nullopt, std::nullopt, std::move((*arrays)[k])});
    } else if (request.random_inputs) {
      out.push_back({"random", std::nullopt, std::nullopt, std::nullopt});
    } else {
      unbound.push_back(k);
    }
  }
  if (unbound.size() == 1) {
    const nrt_client::TensorInfo& info = infos[unbound[0]];
    return absl::InvalidArgumentError(absl::StrFormat(
        "input %s %s is not given (use --input %s=FILE.npy, an inline value, a bundle, or --random-inputs)",
        DescribeInput(info), FormatTensorType(info.shape), info.name));
  }
  if (!unbound.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        DescribeUnbound(infos, unbound),
        " (give them in a bundle or with --input NAME=FILE.npy, or use --random-inputs; --list-inputs lists them)"));
  }
  return out;
}

// One core's model and device tensors (nrt_tensor_t in two tensor sets,
// by the model's tensor names), freed before the session closes.
// On cache lines of its own: each core's thread writes its replica's
// results and samples at every execution.
struct alignas(64) Replica {
  const nrt_client::SdkFunctions* sdk = nullptr;
  std::unique_ptr<LoadedModel> model;
  std::vector<nrt_tensor_t*> inputs, outputs;  // outputs[k] may be an input (donated)
  std::vector<nrt_tensor_t*> owned;
  nrt_tensor_set_t* input_set = nullptr;
  nrt_tensor_set_t* output_set = nullptr;
  std::vector<uint64_t> samples_ns;
  uint64_t wall_ns = 0;
  Clock::time_point timed_start, timed_end;  // this core's measured executions
  NRT_STATUS error = NRT_SUCCESS;            // the first failed execution's
  std::string error_text;
  NRT_STATUS last = NRT_SUCCESS;             // the last execution's status
  std::string numerical_report;              // with NRT_EXEC_COMPLETED_WITH_NUM_ERR
  uint64_t loop_trips = 0;                   // the last execution's outermost loop trips
  uint64_t loop_ns = 0;                      // and that loop's own time
  std::vector<uint64_t> trip_ns;             // per measured execution: loop_ns / loop_trips

  Replica() = default;
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;
  ~Replica() {
    if (sdk == nullptr) return;
    if (input_set != nullptr) sdk->destroy_tensor_set(&input_set);
    if (output_set != nullptr) sdk->destroy_tensor_set(&output_set);
    for (nrt_tensor_t* t : owned) sdk->tensor_free(&t);
    model.reset();
  }
};

// The device tensors of one core's model (inputs left as allocated).
absl::Status PrepareReplica(const RuntimeSession& rt, Replica& r) {
  const nrt_client::SdkFunctions& sdk = rt.sdk();
  r.sdk = &sdk;
  const LoadedModel& m = *r.model;
  auto fail = [&](NRT_STATUS s, const char* function) {
    return absl::ResourceExhaustedError(rt.library().Describe(s, function));
  };
  if (NRT_STATUS s = sdk.allocate_tensor_set(&r.input_set); s != NRT_SUCCESS) return fail(s, "nrt_allocate_tensor_set");
  if (NRT_STATUS s = sdk.allocate_tensor_set(&r.output_set); s != NRT_SUCCESS) return fail(s, "nrt_allocate_tensor_set");
  auto allocate = [&](const nrt_client::TensorInfo& info, nrt_tensor_t** t) -> absl::Status {
    if (NRT_STATUS s = sdk.tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, m.vnc(), info.bytes,
                                           info.name.c_str(), t);
        s != NRT_SUCCESS) {
      return fail(s, "nrt_tensor_allocate");
    }
    r.owned.push_back(*t);
    return absl::OkStatus();
  };
  for (const nrt_client::TensorInfo& info : m.inputs()) {
    nrt_tensor_t* t = nullptr;
    if (absl::Status s = allocate(info, &t); !s.ok()) return s;
    r.inputs.push_back(t);
    if (NRT_STATUS s = sdk.add_tensor_to_tensor_set(r.input_set, info.name.c_str(), t); s != NRT_SUCCESS) {
      return fail(s, "nrt_add_tensor_to_tensor_set");
    }
  }
  for (const nrt_client::TensorInfo& info : m.outputs()) {
    // A donated input (input_output_alias, known from the extras): the
    // output is written into the input's own tensor, as a framework's
    // train step runs.
    const int in = info.aliased_input;
    nrt_tensor_t* t = nullptr;
    if (in >= 0 && static_cast<size_t>(in) < r.inputs.size() && m.inputs()[in].bytes == info.bytes) {
      t = r.inputs[in];
    } else if (absl::Status s = allocate(info, &t); !s.ok()) {
      return s;
    }
    r.outputs.push_back(t);
    if (NRT_STATUS s = sdk.add_tensor_to_tensor_set(r.output_set, info.name.c_str(), t); s != NRT_SUCCESS) {
      return fail(s, "nrt_add_tensor_to_tensor_set");
    }
  }
  return absl::OkStatus();
}

// Writes each input's values into every core's tensors, one input at a
// time: random values are drawn, .npy files and bundles read, into the
// first core's tensor itself where the runtime's device memory is this
// process's (the project's simulated one: no input is held twice on the
// host), else into a host buffer written with nrt_tensor_write; the other
// cores' tensors are written from it. Random values are drawn for every
// input in order, even given ones (their streams are skipped), so an
// input's value does not depend on which others were given.
absl::Status FillInputs(const ExecRequest& request, const std::vector<BoundInput>& inputs,
                        const RuntimeSession& rt, std::vector<Replica>& replicas) {
  const std::vector<nrt_client::TensorInfo>& infos = replicas.front().model->inputs();
  RandomTensors random(request.seed);
  std::vector<uint8_t> host;  // only where the runtime's tensors cannot be written in place
  for (size_t k = 0; k < infos.size(); ++k) {
    const nrt_client::TensorInfo& info = infos[k];
    const BoundInput& in = inputs[k];
    Replica& first = replicas.front();
    uint8_t* data = rt.library().device_memory_is_host()
                        ? static_cast<uint8_t*>(rt.sdk().tensor_get_va(first.inputs[k]))
                        : nullptr;
    const bool in_place = data != nullptr;
    if (!in_place) {
      host.assign(info.bytes, 0);
      data = host.data();
    }
    if (in.source == "random") {
      random.NextInto(info.shape, data);
    } else {
      if (request.random_inputs) random.Skip(info.shape);
      if (in.bundle) {
        // Checked at binding: the array's bytes are the tensor's.
        if (absl::Status s = in.bundle->file->ReadInto(in.bundle->array, data); !s.ok()) return s;
      } else if (in.file) {
        absl::Status s = ReadNpyInto(*in.file, info.shape.type, data, info.bytes);
        if (!s.ok()) return absl::InvalidArgumentError(absl::StrFormat("input '%s': %s", info.name, s.message()));
      } else if (in.value) {
        const std::vector<uint8_t>& bytes = in.value->data();
        std::memcpy(data, bytes.data(), std::min<uint64_t>(bytes.size(), info.bytes));
      }
    }
    for (Replica& r : replicas) {
      if (in_place && &r == &first) continue;
      if (NRT_STATUS s = rt.sdk().tensor_write(r.inputs[k], data, 0, info.bytes); s != NRT_SUCCESS) {
        return absl::InternalError(absl::StrFormat("input '%s': %s", info.name,
                                                   rt.library().Describe(s, "nrt_tensor_write")));
      }
    }
    // Done writing through the address: the runtime may keep work derived
    // from the input again (a convolution's reordered weights).
    if (in_place && rt.ext().tensor_written != nullptr) rt.ext().tensor_written(first.inputs[k]);
  }
  return absl::OkStatus();
}

// One execution: NRT_SUCCESS and NRT_EXEC_COMPLETED_WITH_NUM_ERR (outputs
// written) go on; anything else is kept as the replica's error.
bool ExecuteOnce(const RuntimeSession& rt, Replica& r) {
  const NRT_STATUS s = rt.sdk().execute(r.model->handle(), r.input_set, r.output_set);
  r.last = s;
  if (rt.ext().last_loop_trips == nullptr ||
      rt.ext().last_loop_trips(r.model->handle(), &r.loop_trips, &r.loop_ns) != NRT_SUCCESS) {
    r.loop_trips = 0;
    r.loop_ns = 0;
  }
  if (s == NRT_SUCCESS) return true;
  if (s == NRT_EXEC_COMPLETED_WITH_NUM_ERR) {
    // The report is the library's last error (where it has the extras).
    const char* report = rt.ext().get_last_error != nullptr ? rt.ext().get_last_error() : nullptr;
    r.numerical_report = report != nullptr && *report != '\0' ? report : "an output holds NaN or Inf";
    return true;
  }
  r.error = s;
  r.error_text = rt.library().Describe(s, "nrt_execute");
  return false;
}

// Warmup, then the measured executions; stops at the first failure. With
// several cores, `warmed` holds every core until all have warmed up, so no
// core's one-off first execution overlaps another's measured window.
void RunReplica(const RuntimeSession& rt, Replica& r, int64_t warmup, int64_t iterations,
                std::atomic<bool>* failed, std::barrier<>* warmed, Progress* progress) {
  for (int64_t i = 0; i < warmup && !failed->load(); ++i) {
    if (!ExecuteOnce(rt, r)) {
      failed->store(true);
      break;
    }
  }
  if (warmed != nullptr) warmed->arrive_and_wait();
  if (r.error != NRT_SUCCESS) return;
  r.samples_ns.reserve(static_cast<size_t>(iterations));
  const auto start = Clock::now();
  r.timed_start = start;
  for (int64_t i = 0; i < iterations && !failed->load(); ++i) {
    const auto t0 = Clock::now();
    const bool ok = ExecuteOnce(rt, r);
    const auto t1 = Clock::now();
    if (!ok) {
      failed->store(true);
      return;
    }
    r.samples_ns.push_back(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    if (r.loop_trips > 0) r.trip_ns.push_back(r.loop_ns / r.loop_trips);
    if (progress != nullptr) progress->Update(static_cast<uint64_t>(i + 1), "executions");
  }
  r.timed_end = Clock::now();
  r.wall_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(r.timed_end - start).count());
}

// The span covering every core's measured executions (warm-ups excluded).
uint64_t MeasuredWindowNs(const std::vector<Replica>& replicas) {
  Clock::time_point first = replicas.front().timed_start, last = replicas.front().timed_end;
  for (const Replica& r : replicas) {
    first = std::min(first, r.timed_start);
    last = std::max(last, r.timed_end);
  }
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(last - first).count());
}

json StatsJson(const LatencyStats& s) {
  return json{{"count", s.count},
              {"latency_us",
               {{"min", s.min_us},
                {"p50", s.p50_us},
                {"p90", s.p90_us},
                {"p99", s.p99_us},
                {"max", s.max_us},
                {"mean", s.mean_us}}},
              {"throughput_per_s", s.throughput}};
}

std::string StatsLine(const LatencyStats& s) {
  return absl::StrFormat(
      "latency (us): min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  | throughput %.1f "
      "inferences/s",
      s.min_us, s.p50_us, s.p90_us, s.p99_us, s.max_us, s.throughput);
}

}  // namespace

absl::StatusOr<NamedArg> SplitNamedArg(std::string_view text, std::string_view flag) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s '%s': expected NAME=VALUE (NAME an HLO name or #k)", std::string(flag),
        std::string(text)));
  }
  return NamedArg{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

namespace {

// Where this process stands in a job of several ranks.
struct RankContext {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
};

// FileFeed as libnrt's nrt_tools_feed_t callbacks.
int FeedError(const absl::Status& s, char* error, size_t error_size) {
  std::snprintf(error, error_size, "%s", std::string(s.message()).c_str());
  return 1;
}

nrt_tools_feed_t FeedCallbacks(FileFeed* feed) {
  nrt_tools_feed_t callbacks{};
  callbacks.context = feed;
  auto shape_of = [](const char* dtype, const int64_t* dims, size_t ndim) {
    return hlo::Shape::Array(program::DtypeFromName(dtype).value_or(hlo::ElementType::kInvalid),
                             std::vector<int64_t>(dims, dims + ndim));
  };
  callbacks.infeed = [](void* context, const char* instruction, const char* dtype,
                        const int64_t* dims, size_t ndim, void* data, size_t bytes, char* error,
                        size_t error_size) -> int {
    hlo::Shape shape = hlo::Shape::Array(
        program::DtypeFromName(dtype).value_or(hlo::ElementType::kInvalid),
        std::vector<int64_t>(dims, dims + ndim));
    absl::Status s = static_cast<FileFeed*>(context)->Infeed(instruction, shape,
                                                              static_cast<uint8_t*>(data), bytes);
    return s.ok() ? 0 : FeedError(s, error, error_size);
  };
  callbacks.outfeed = [](void* context, const char* instruction, const char* dtype,
                         const int64_t* dims, size_t ndim, const void* data, size_t bytes,
                         char* error, size_t error_size) -> int {
    hlo::Shape shape = hlo::Shape::Array(
        program::DtypeFromName(dtype).value_or(hlo::ElementType::kInvalid),
        std::vector<int64_t>(dims, dims + ndim));
    absl::Status s = static_cast<FileFeed*>(context)->Outfeed(
        instruction, shape, static_cast<const uint8_t*>(data), bytes);
    return s.ok() ? 0 : FeedError(s, error, error_size);
  };
  (void)shape_of;
  return callbacks;
}

int RunExecRank(const ExecRequest& request, const RankContext& job) {
  // Without --cores only one core is taken, so that several tools can share
  // an instance; a rank takes its own. One process choosing no cores at all
  // takes the first free one; ranks and an explicit NEURON_RT_VISIBLE_CORES
  // keep their cores fixed.
  nrt_client::CoreChoice choice;
  choice.cores = request.cores;
  choice.index = static_cast<size_t>(job.local_rank);
  choice.first_free = job.world <= 1;
  absl::StatusOr<std::unique_ptr<RuntimeSession>> session =
      RuntimeSession::Open(kTool, request.quiet, choice);
  if (!session.ok()) return Error(std::string(session.status().message()));
  const RuntimeSession& rt = **session;

  if (!request.outfeed_dir.empty()) {
    if (absl::Status s = dump::MakeDirs(request.outfeed_dir); !s.ok()) {
      return Error(absl::StrCat("--outfeed-dir: ", s.message()));
    }
  }
  FileFeed feed(request.infeeds, request.outfeed_dir,
                request.random_inputs ? std::optional<uint64_t>(request.seed) : std::nullopt);
  const nrt_tools_feed_t feed_callbacks = FeedCallbacks(&feed);
  if (rt.ext().set_model_feed == nullptr && (!request.infeeds.empty() || !request.outfeed_dir.empty())) {
    return Error(rt.library().Unavailable("--infeed and --outfeed-dir (host feeds)"));
  }

  // Read (or compile) once, load once per core.
  absl::StatusOr<nrt_client::ModelInput> input = nrt_client::OpenModelInput(request.neff_path, request.compile, rt);
  if (!input.ok()) return Error(std::string(input.status().message()));
  std::vector<Replica> replicas(rt.cores().size());
  for (size_t i = 0; i < replicas.size(); ++i) {
    nrt_client::CollectiveLoad collective;
    if (job.world > 1) collective = {static_cast<uint32_t>(job.rank), static_cast<uint32_t>(job.world)};
    absl::StatusOr<std::unique_ptr<LoadedModel>> model = LoadedModel::Load(
        rt, *input, static_cast<int>(i), job.world > 1 ? &collective : nullptr);
    if (!model.ok()) return Error(absl::StrCat("cannot load the NEFF: ", model.status().message()));
    replicas[i].model = std::move(*model);
    if (rt.ext().set_model_feed != nullptr) {
      rt.ext().set_model_feed(replicas[i].model->handle(), &feed_callbacks);
    }
  }
  const LoadedModel& model = *replicas[0].model;
  // Where the runtime could not say an element type (nrt_dtype_t has no
  // value for it, and the library has no extras): refuse, naming it.
  for (const auto* list : {&model.inputs(), &model.outputs()}) {
    for (const nrt_client::TensorInfo& t : *list) {
      if (t.shape.type == hlo::ElementType::kInvalid) {
        return Error(rt.library().Unavailable(absl::StrFormat(
            "the element type of '%s' (nrt_dtype_t has none for it; %d bytes)", t.name, t.bytes)));
      }
    }
  }
  if (!model.description().has_value() && job.rank == 0) {
    std::fprintf(stderr, "%s: %s\n", kTool,
                 rt.library().Unavailable("model name, pytree paths and donated inputs").c_str());
  }
  if (request.list_inputs) {
    if (job.rank == 0) PrintInputs(model, request.json);
    std::fflush(stdout);
    return kExitOk;
  }

  absl::StatusOr<std::vector<BoundInput>> inputs = BindInputs(request, model);
  if (!inputs.ok()) return Error(std::string(inputs.status().message()));

  // Validate output and expect names before running.
  std::vector<std::pair<size_t, std::string>> output_files;
  for (const NamedArg& arg : request.outputs) {
    absl::StatusOr<size_t> k = FindTensor(model.outputs(), arg.name, "output");
    if (!k.ok()) return Error(absl::StrCat("--output: ", k.status().message()));
    output_files.emplace_back(*k, arg.value);
  }
  std::vector<std::pair<size_t, hlo::Literal>> expects;
  for (const NamedArg& arg : request.expects) {
    absl::StatusOr<size_t> k = FindTensor(model.outputs(), arg.name, "output");
    if (!k.ok()) return Error(absl::StrCat("--expect: ", k.status().message()));
    absl::StatusOr<hlo::Literal> want = ReadNpyFile(arg.value);
    if (!want.ok()) return Error(absl::StrCat("--expect: ", want.status().message()));
    expects.emplace_back(*k, std::move(*want));
  }

  // The models' own buffers are made (at load); their inputs and outputs
  // must fit what is left before gigabytes are read or drawn.
  uint64_t io_bytes = 0;
  for (const Replica& r : replicas) {
    for (const nrt_client::TensorInfo& t : r.model->inputs()) io_bytes += t.bytes;
    for (const nrt_client::TensorInfo& t : r.model->outputs())
      if (t.aliased_input < 0) io_bytes += t.bytes;  // donated ones share their input's
  }
  const std::string model_name = model.name().empty() ? input->display : model.name();
  if (absl::Status s = CheckHostMemory(io_bytes, absl::StrFormat("the inputs and outputs of '%s'", model_name));
      !s.ok()) {
    return Error(absl::StrCat("cannot allocate the tensors: ", s.message()));
  }
  for (Replica& r : replicas) {
    if (absl::Status s = PrepareReplica(rt, r); !s.ok()) {
      return Error(absl::StrCat("cannot allocate the tensors: ", s.message()));
    }
  }
  if (absl::Status s = FillInputs(request, *inputs, rt, replicas); !s.ok()) return Error(std::string(s.message()));

  const int64_t warmup = request.warmup;
  const int64_t iterations = std::max<int64_t>(1, request.iterations);
  std::atomic<bool> failed{false};
  // The first core's count shows how far a benchmark is.
  std::optional<Progress> progress;
  if (request.benchmark) {
    progress.emplace(absl::StrFormat("benchmark on %d core%s", replicas.size(),
                                     replicas.size() == 1 ? "" : "s"),
                     static_cast<uint64_t>(iterations));
  }
  Progress* shown = progress ? &*progress : nullptr;
  if (replicas.size() == 1) {
    RunReplica(rt, replicas[0], warmup, iterations, &failed, nullptr, shown);
  } else {
    std::barrier<> warmed(static_cast<std::ptrdiff_t>(replicas.size()));
    std::vector<std::thread> threads;
    for (Replica& r : replicas) {
      Progress* mine = &r == &replicas.front() ? shown : nullptr;
      threads.emplace_back([&rt, &r, warmup, iterations, &failed, &warmed, mine] {
        RunReplica(rt, r, warmup, iterations, &failed, &warmed, mine);
      });
    }
    for (std::thread& t : threads) t.join();
  }
  progress.reset();  // erase the line before the results
  for (const Replica& r : replicas) {
    if (r.error != NRT_SUCCESS) {
      std::string where = job.world > 1 ? absl::StrFormat("rank %d (nc%d)", job.rank, r.model->core())
                                        : absl::StrFormat("nc%d", r.model->core());
      return Error(absl::StrFormat("execution on %s failed: %s", where, r.error_text));
    }
  }
  // NEURON_FAIL_ON_NAN=1 (as the SDK documents it): a NaN or Inf in a
  // result fails the run.
  const char* fail_on_nan = std::getenv("NEURON_FAIL_ON_NAN");
  const bool fail_on_num_err = fail_on_nan != nullptr && std::string_view(fail_on_nan) == "1";
  for (const Replica& r : replicas) {
    if (r.last == NRT_EXEC_COMPLETED_WITH_NUM_ERR && fail_on_num_err) {
      PrintError(kTool, absl::StrCat(r.numerical_report,
                                     " (NRT_EXEC_COMPLETED_WITH_NUM_ERR, NEURON_FAIL_ON_NAN=1)"));
      return kExitFailure;
    }
  }

  // Results of the first core.
  Replica& first = replicas[0];
  std::vector<hlo::Literal> results;
  for (size_t k = 0; k < model.outputs().size(); ++k) {
    hlo::Literal value = hlo::Literal::Zeros(model.outputs()[k].shape);
    const size_t bytes = std::min<size_t>(value.mutable_data().size(), model.outputs()[k].bytes);
    if (NRT_STATUS s = rt.sdk().tensor_read(first.outputs[k], value.mutable_data().data(), 0, bytes);
        s != NRT_SUCCESS) {
      return Error(absl::StrFormat("cannot read output '%s': %s", model.outputs()[k].name,
                                   rt.library().Describe(s, "nrt_tensor_read")));
    }
    results.push_back(std::move(value));
  }

  json doc;
  doc["neff"] = request.neff_path;
  doc["input_kind"] = input->kind;
  doc["runtime"] = json::parse(rt.library().VersionJson());
  doc["model"] = model.name();
  if (model.description().has_value()) doc["target"] = model.description()->value("target", std::string());
  doc["cores"] = rt.cores();
  doc["status"] = nrt_get_status_name(first.last);
  if (!first.numerical_report.empty()) doc["numerical_report"] = first.numerical_report;
  doc["inputs"] = json::array();
  for (size_t k = 0; k < model.inputs().size(); ++k) {
    const nrt_client::TensorInfo& t = model.inputs()[k];
    doc["inputs"].push_back({{"position", t.position},
                             {"name", t.name},
                             {"dtype", program::DtypeName(t.shape.type)},
                             {"shape", ShapeJson(t.shape)},
                             {"source", (*inputs)[k].source}});
  }

  // Files.
  json outputs_json = json::array();
  if (!request.output_dir.empty()) {
    if (absl::Status s = dump::MakeDirs(request.output_dir); !s.ok()) {
      return Error(absl::StrCat("--output-dir: ", s.message()));
    }
  }
  for (size_t k = 0; k < results.size(); ++k) {
    const nrt_client::TensorInfo& t = model.outputs()[k];
    json entry = {{"position", t.position},
                  {"name", t.name},
                  {"dtype", program::DtypeName(t.shape.type)},
                  {"stored_as", program::DtypeName(NpyStorageType(t.shape.type))},
                  {"shape", ShapeJson(t.shape)}};
    if (!request.output_dir.empty()) {
      const std::string file = absl::StrFormat("out%d.npy", k);
      if (absl::Status s = WriteNpyFile(request.output_dir + "/" + file, results[k]); !s.ok()) {
        return Error(std::string(s.message()));
      }
      entry["file"] = file;
    }
    outputs_json.push_back(entry);
  }
  if (!request.output_dir.empty()) {
    const std::string path = request.output_dir + "/outputs.json";
    if (absl::Status s = WriteFileAtomically(path, json{{"outputs", outputs_json}}.dump(2) + "\n"); !s.ok()) {
      return Error(std::string(s.message()));
    }
  }
  for (const auto& [k, path] : output_files) {
    if (absl::Status s = WriteNpyFile(path, results[k]); !s.ok()) {
      return Error(std::string(s.message()));
    }
  }
  if (!request.outputs_bundle.empty()) {
    if (absl::Status s = WriteOutputsBundle(request.outputs_bundle, model, results); !s.ok()) {
      return Error(std::string(s.message()));
    }
  }

  // Printing and checks.
  std::string text;
  if (request.print) {
    for (size_t k = 0; k < results.size(); ++k) {
      const std::string printed = FormatTensor(results[k]);
      absl::StrAppend(&text, "result[", k, "]: ", printed, "\n");
      outputs_json[k]["printed"] = printed;
    }
  }
  doc["outputs"] = outputs_json;
  int exit_code = kExitOk;
  std::string expect_error;
  json expect_json = json::array();
  for (const auto& [k, want] : expects) {
    const nrt_client::TensorInfo& t = model.outputs()[k];
    Comparison c = CompareTensors(results[k], want, request.tolerance);
    json e = {{"output", t.name}, {"position", t.position}, {"ok", c.ok},
              {"mismatches", c.mismatches}};
    if (!c.ok) {
      e["error"] = c.error;
      if (c.worst_index >= 0) {
        e["worst"] = {{"index", c.worst_coords}, {"got", c.got}, {"expected", c.expected}};
      }
      if (expect_error.empty()) {
        expect_error = absl::StrFormat("--expect %s: %s", Describe(t), c.error);
      }
      exit_code = kExitFailure;
    } else {
      absl::StrAppend(&text, absl::StrFormat("[SUCCESS] %s matches (rtol %g, atol %g)\n",
                                             Describe(t), request.tolerance.rtol,
                                             request.tolerance.atol));
    }
    expect_json.push_back(e);
  }
  if (!expects.empty()) doc["expect"] = expect_json;

  if (request.benchmark) {
    std::vector<uint64_t> all;
    json per_core = json::array();
    for (const Replica& r : replicas) {
      all.insert(all.end(), r.samples_ns.begin(), r.samples_ns.end());
      LatencyStats s = ComputeLatencyStats(r.samples_ns, r.wall_ns);
      json j = StatsJson(s);
      j["core"] = r.model->core();
      per_core.push_back(j);
      if (replicas.size() > 1) {
        absl::StrAppend(&text, absl::StrFormat("nc%d: %s\n", r.model->core(), StatsLine(s)));
      }
    }
    // Throughput of all cores together: every measured execution over the
    // window from the first core's timed start to the last core's end.
    const uint64_t window_ns = MeasuredWindowNs(replicas);
    LatencyStats total = ComputeLatencyStats(all, window_ns);
    absl::StrAppend(&text, absl::StrFormat("%d iterations (%d warmup) on %d core%s: %s\n",
                                           iterations, warmup, replicas.size(),
                                           replicas.size() == 1 ? "" : "s", StatsLine(total)));
    if (!request.plot_path.empty()) {
      std::vector<CoreLatencies> cores;
      for (const Replica& r : replicas) {
        cores.push_back({r.model->core(), &r.samples_ns,
                         ComputeLatencyStats(r.samples_ns, r.wall_ns)});
      }
      const std::string title = absl::StrFormat(
          "neuron-exec: %s%s, %d iteration%s per core (%d warmup)", model.name(),
          job.world > 1 ? absl::StrFormat(" (rank %d)", job.rank) : std::string(), iterations,
          iterations == 1 ? "" : "s", warmup);
      if (absl::Status s = WriteLatencyPlot(request.plot_path, title, cores); !s.ok()) {
        return Error(std::string(s.message()));
      }
    }
    // A program that loops (a generate loop) is also timed per trip: per
    // token, for an LLM.
    const uint64_t trips = replicas.front().loop_trips;
    json b = StatsJson(total);
    std::vector<uint64_t> trip_ns;
    for (const Replica& r : replicas) trip_ns.insert(trip_ns.end(), r.trip_ns.begin(), r.trip_ns.end());
    if (trips > 0 && !trip_ns.empty()) {
      // Each execution's loop time over its trips: the loop's own time, so
      // a prompt's prefill before the loop is not spread over the tokens.
      const LatencyStats t = ComputeLatencyStats(trip_ns, 0);
      absl::StrAppend(&text, absl::StrFormat("per loop trip (%d trips an execution): latency (us): min %.3f  p50 %.3f  "
                                             "p90 %.3f  p99 %.3f  max %.3f\n",
                                             trips, t.min_us, t.p50_us, t.p90_us, t.p99_us, t.max_us));
      b["loop_trips"] = trips;
      b["per_trip_us"] = {{"min", t.min_us}, {"p50", t.p50_us}, {"p90", t.p90_us},
                          {"p99", t.p99_us}, {"max", t.max_us}, {"mean", t.mean_us}};
    }
    b["iterations"] = iterations;
    b["warmup"] = warmup;
    b["window_s"] = static_cast<double>(window_ns) * 1e-9;
    b["per_core"] = per_core;
    doc["benchmark"] = b;
  }

  const bool stdout_is_data = [&] {
    if (request.outputs_bundle == "-") return true;
    for (const auto& [k, path] : output_files) {
      if (path == "-") return true;
    }
    return false;
  }();
  if (job.world > 1) {
    doc["rank"] = job.rank;
    doc["world"] = job.world;
  }
  if (job.rank != 0) {
    // Rank 0 speaks for the job; the others only write files.
  } else if (request.json) {
    if (!stdout_is_data) std::printf("%s\n", doc.dump(2).c_str());
  } else if (!stdout_is_data) {
    std::fputs(text.c_str(), stdout);
  }
  std::fflush(stdout);
  if (!expect_error.empty()) PrintError(kTool, expect_error);
  return exit_code;
}

// The request as rank `rank` of `world` sees it.
ExecRequest ForRank(const ExecRequest& request, int rank, int world) {
  ExecRequest r = request;
  const std::string k = std::to_string(rank);
  auto subst = [&](std::string& s) { s = absl::StrReplaceAll(s, {{"%r", k}}); };
  for (NamedArg& a : r.inputs) subst(a.value);
  for (std::string& b : r.bundles) subst(b);
  subst(r.outputs_bundle);
  for (NamedArg& a : r.outputs) subst(a.value);
  for (NamedArg& a : r.expects) subst(a.value);
  if (!r.output_dir.empty()) {
    if (r.output_dir.find("%r") != std::string::npos) {
      subst(r.output_dir);
    } else if (world > 1) {
      r.output_dir += "/rank" + k;
    }
  }
  for (std::string& f : r.infeeds) subst(f);
  if (!r.outfeed_dir.empty()) {
    if (r.outfeed_dir.find("%r") != std::string::npos) {
      subst(r.outfeed_dir);
    } else if (world > 1) {
      r.outfeed_dir += "/rank" + k;
    }
  }
  // Each rank draws its own picture when the name has %r; else rank 0 alone.
  if (r.plot_path.find("%r") != std::string::npos) {
    subst(r.plot_path);
  } else if (rank != 0) {
    r.plot_path.clear();
  }
  r.seed = request.seed + static_cast<uint64_t>(rank);
  return r;
}

}  // namespace

// Waits (up to 5 s) until `host_port` can be listened on again: the
// launcher closes its copy of the bootstrap listener just after forking.
void WaitUntilBindable(const std::string& host_port) {
  absl::StatusOr<sockaddr_in> addr = collectives::net::ParseHostPort(host_port);
  if (!addr.ok()) return;
  for (int i = 0; i < 500; ++i) {
    absl::StatusOr<int> fd = collectives::net::Listen(*addr);
    if (fd.ok()) {
      close(*fd);
      return;
    }
    usleep(10000);
  }
}

int RunExec(const ExecRequest& request) {
  Progress::EnableForTool(kTool, request.quiet);
  const config::EnvLookup env = config::ProcessEnv();
  absl::StatusOr<std::optional<collectives::Launch>> launch = collectives::LaunchFromEnv(env);
  if (!launch.ok()) return Error(std::string(launch.status().message()));
  if (!launch->has_value() && request.ranks <= 1) return RunExecRank(request, RankContext{});
  const int world = launch->has_value() ? (*launch)->world : request.ranks;
  if (launch->has_value() && request.ranks > 0 && request.ranks != world) {
    return Error(absl::StrFormat("-r %d but %s says the world has %d ranks", request.ranks,
                                 (*launch)->via, world));
  }
  if (world > 1 && request.cores.has_value()) {
    return Error("--cores cannot be combined with several ranks: local rank k takes the k-th "
                 "visible NeuronCore of its host");
  }
  if (world > 1 && request.neff_path == "-") {
    return Error("several ranks cannot share a model on stdin: give its file");
  }
  if (!launch->has_value()) {
    // Every forked rank needs a core of its own: refuse before starting
    // any, rather than leave the others waiting for the one that failed.
    absl::StatusOr<const nrt_client::RuntimeLibrary*> library = nrt_client::RuntimeLibrary::Get();
    if (!library.ok()) return Error(std::string(library.status().message()));
    uint32_t visible = 0;
    if (NRT_STATUS s = (*library)->sdk().get_visible_vnc_count(&visible); s != NRT_SUCCESS) {
      return Error(absl::StrCat("cannot count the NeuronCores: ",
                                (*library)->Describe(s, "nrt_get_visible_vnc_count")));
    }
    if (visible < static_cast<uint32_t>(world)) {
      return Error(absl::StrFormat("-r %d needs %d NeuronCores, but %d are visible "
                                   "(NEURON_RT_VISIBLE_CORES, NEURON_SIM_INSTANCE_TYPE)",
                                   world, world, visible));
    }
  }
  collectives::CommOptions base;
  if (std::optional<std::string> id = env("NEURON_RT_ROOT_COMM_ID")) base.root_comm_id = *id;
  auto run_rank = [&](const collectives::CommOptions& o) {
    RankContext job;
    job.rank = o.rank;
    job.world = o.world;
    job.local_rank = collectives::LocalRankFromEnv(env, o.rank);
    if (!launch->has_value()) {
      // libnrt bootstraps the job from NEURON_RT_ROOT_COMM_ID, as the SDK
      // documents it. Rank 0 hands it the launcher's listener (an extra);
      // a runtime without that binds the port again once the launcher's
      // listener is closed (a rank connecting before then may be lost).
      setenv("NEURON_RT_ROOT_COMM_ID", o.root_comm_id.c_str(), 1);
      if (o.listen_fd >= 0) {
        absl::StatusOr<const nrt_client::RuntimeLibrary*> library = nrt_client::RuntimeLibrary::Get();
        if (library.ok() && (*library)->ext().set_bootstrap_listener != nullptr) {
          (*library)->ext().set_bootstrap_listener(o.listen_fd);
        } else {
          close(o.listen_fd);
          WaitUntilBindable(o.root_comm_id);
        }
      }
    }
    return RunExecRank(ForRank(request, o.rank, o.world), job);
  };
  if (launch->has_value()) {
    base.rank = (*launch)->rank;
    base.world = world;
    return run_rank(base);
  }
  return collectives::ForkLocalRanks(kTool, world, base, run_rank);
}

}  // namespace neuron::exec_tool
