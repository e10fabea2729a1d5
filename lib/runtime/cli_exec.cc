#include "lib/runtime/cli_exec.h"

#include <sys/stat.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "lib/collectives/executor_collectives.h"
#include "lib/collectives/launch.h"
#include "lib/collectives/local_launch.h"
#include "lib/device/instance_catalog.h"
#include "lib/dump/files.h"
#include "lib/program/dtype.h"
#include "lib/runtime/cli_bundle.h"
#include "lib/runtime/cli_latency.h"
#include "lib/runtime/cli_latency_plot.h"
#include "lib/runtime/cli_npy.h"
#include "lib/runtime/cli_random.h"
#include "lib/runtime/cli_tensor_text.h"
#include "lib/runtime/file_feed.h"
#include "lib/runtime/memory_check.h"
#include "lib/runtime/observe.h"
#include "lib/runtime/runtime.h"
#include "lib/runtime/status.h"
#include "lib/support/cli.h"
#include "lib/support/atomic_file.h"
#include "lib/support/progress.h"
#include "lib/tensorfile/bundle_writer.h"
#include "lib/tensorfile/tensor_file.h"
#include "nlohmann/json.hpp"

namespace neuron::runtime {
namespace {

constexpr const char* kTool = "neuron-exec";
using Clock = std::chrono::steady_clock;
using nlohmann::json;

int Error(const std::string& message) {
  PrintError(kTool, message);
  return kExitFailure;
}

int RuntimeError(const std::string& what, const absl::Status& status) {
  return Error(absl::StrCat(what, ": ", DescribeForCli(status)));
}

std::string Describe(const TensorInfo& t) {
  return absl::StrFormat("#%d '%s' %s", t.position, t.name, FormatTensorType(t.shape));
}

std::string ListTensors(const std::vector<TensorInfo>& infos) {
  std::string out;
  for (const TensorInfo& t : infos) {
    if (!out.empty()) out += ", ";
    out += Describe(t);
  }
  return out.empty() ? "none" : out;
}

// Finds a tensor by "#k" or by name (a leading '%' is ignored).
absl::StatusOr<size_t> FindTensor(const std::vector<TensorInfo>& infos, std::string_view name,
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

absl::Status WrongDims(const TensorInfo& info, const hlo::Shape& given) {
  return absl::InvalidArgumentError(absl::StrFormat("input %s: the value given is %s; the dimensions must match",
                                                    Describe(info), FormatTensorType(given)));
}

// --list-inputs: what a bundle must hold, one input a line (or JSON).
void PrintInputs(const Model& model, bool as_json) {
  if (as_json) {
    json list = json::array();
    for (const TensorInfo& t : model.inputs()) {
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
  for (const TensorInfo& t : model.inputs()) {
    const std::string path = InputPath(t);
    std::printf("#%d\t%s\t%s\t%s\n", t.position, t.name.c_str(), path.empty() ? "-" : path.c_str(),
                FormatTensorType(t.shape).c_str());
  }
}

// --outputs: every result in one bundle, keyed out0, out1, ...
absl::Status WriteOutputsBundle(const std::string& path, const Model& model,
                                const std::vector<hlo::Literal>& results) {
  // Standard output takes safetensors (a zip needs a file it can seek in).
  const std::optional<tensorfile::Format> format =
      path == "-" ? std::optional<tensorfile::Format>(tensorfile::Format::kSafetensors)
                  : tensorfile::BundleFormatOfName(path);
  if (!format) {
    return absl::InvalidArgumentError(absl::StrFormat("--outputs %s: name a .npz or .safetensors file", path));
  }
  std::vector<tensorfile::NamedArray> arrays;
  for (size_t k = 0; k < results.size(); ++k) {
    const std::vector<uint8_t>& bytes = results[k].data();
    arrays.push_back({absl::StrCat("out", k), model.outputs()[k].shape.type, results[k].shape().dims,
                      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
  }
  return tensorfile::WriteBundle(path, *format, arrays);
}

// Binds every model input to its source; the error names what is wrong.
absl::StatusOr<std::vector<BoundInput>> BindInputs(const ExecRequest& request, const Model& model) {
  const std::vector<TensorInfo>& infos = model.inputs();
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
    const TensorInfo& info = infos[*k];
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
    const TensorInfo& info = infos[unbound[0]];
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

// One core's model and device tensors.
// On cache lines of its own: each core's thread writes its replica's
// results and samples at every execution.
struct alignas(64) Replica {
  std::unique_ptr<Model> model;
  std::vector<std::unique_ptr<TensorBuffer>> inputs, outputs;
  std::vector<const TensorBuffer*> in_ptrs;
  std::vector<TensorBuffer*> out_ptrs;
  std::vector<uint64_t> samples_ns;
  uint64_t wall_ns = 0;
  Clock::time_point timed_start, timed_end;  // this core's measured executions
  absl::Status error;
  ExecuteResult last;
};

// The device tensors of one core's model (inputs left as allocated).
absl::Status PrepareReplica(Runtime& rt, Replica& r) {
  const Model& m = *r.model;
  for (const TensorInfo& info : m.inputs()) {
    absl::StatusOr<std::unique_ptr<TensorBuffer>> t =
        rt.AllocateTensor(m.core_id(), info.bytes, info.name);
    if (!t.ok()) return t.status();
    r.in_ptrs.push_back(t->get());
    r.inputs.push_back(std::move(*t));
  }
  for (const TensorInfo& info : m.outputs()) {
    // A donated input (input_output_alias): the output is written into the
    // input's own tensor, as a framework's train step runs.
    const int in = info.aliased_input;
    if (in >= 0 && static_cast<size_t>(in) < r.inputs.size() && r.inputs[in]->size() == info.bytes) {
      r.out_ptrs.push_back(r.inputs[in].get());
      r.outputs.push_back(TensorBuffer::View(r.inputs[in]->data(), info.bytes, info.name,
                                             r.inputs[in]->core()));
      continue;
    }
    absl::StatusOr<std::unique_ptr<TensorBuffer>> t =
        rt.AllocateTensor(m.core_id(), info.bytes, info.name);
    if (!t.ok()) return t.status();
    r.out_ptrs.push_back(t->get());
    r.outputs.push_back(std::move(*t));
  }
  return absl::OkStatus();
}

// Writes each input's values into the first core's tensors, in place:
// random values are drawn into them, .npy files read into them. Random
// values are drawn for every input in order, even given ones (their
// streams are skipped), so an input's value does not depend on which
// others were given. The other cores copy the first core's tensors.
absl::Status FillInputs(const ExecRequest& request, const std::vector<BoundInput>& inputs,
                        std::vector<Replica>& replicas) {
  Replica& first = replicas.front();
  const std::vector<TensorInfo>& infos = first.model->inputs();
  RandomTensors random(request.seed);
  for (size_t k = 0; k < infos.size(); ++k) {
    const TensorInfo& info = infos[k];
    TensorBuffer& t = *first.inputs[k];
    uint8_t* data = static_cast<uint8_t*>(t.data());
    const BoundInput& in = inputs[k];
    TensorOpScope dma("tensor_write", &t, nullptr, info.bytes);  // profiles: a host->device copy
    if (in.source == "random") {
      random.NextInto(info.shape, data);
      continue;
    }
    if (request.random_inputs) random.Skip(info.shape);
    if (in.bundle) {
      // Checked at binding: the array's bytes are the tensor's.
      if (absl::Status s = in.bundle->file->ReadInto(in.bundle->array, data); !s.ok()) return s;
    } else if (in.file) {
      absl::Status s = ReadNpyInto(*in.file, info.shape.type, data, info.bytes);
      if (!s.ok()) return absl::InvalidArgumentError(absl::StrFormat("input '%s': %s", info.name, s.message()));
    } else if (in.value) {
      const std::vector<uint8_t>& bytes = in.value->data();
      if (absl::Status s = t.Write(bytes.data(), 0, std::min<uint64_t>(bytes.size(), info.bytes)); !s.ok())
        return s;
    }
  }
  for (size_t i = 1; i < replicas.size(); ++i)
    for (size_t k = 0; k < infos.size(); ++k)
      if (absl::Status s = replicas[i].inputs[k]->Write(first.inputs[k]->data(), 0, infos[k].bytes); !s.ok())
        return s;
  return absl::OkStatus();
}

// Warmup, then the measured executions; stops at the first failure. With
// several cores, `warmed` holds every core until all have warmed up, so no
// core's one-off first execution overlaps another's measured window.
void RunReplica(Replica& r, int64_t warmup, int64_t iterations, const ExecuteOptions& options,
                std::atomic<bool>* failed, std::barrier<>* warmed, Progress* progress) {
  for (int64_t i = 0; i < warmup && !failed->load(); ++i) {
    absl::StatusOr<ExecuteResult> res = r.model->Execute(r.in_ptrs, r.out_ptrs, options);
    if (!res.ok()) {
      r.error = res.status();
      failed->store(true);
      break;
    }
    r.last = *res;
  }
  if (warmed != nullptr) warmed->arrive_and_wait();
  if (!r.error.ok()) return;
  r.samples_ns.reserve(static_cast<size_t>(iterations));
  const auto start = Clock::now();
  r.timed_start = start;
  for (int64_t i = 0; i < iterations && !failed->load(); ++i) {
    const auto t0 = Clock::now();
    absl::StatusOr<ExecuteResult> res = r.model->Execute(r.in_ptrs, r.out_ptrs, options);
    const auto t1 = Clock::now();
    if (!res.ok()) {
      r.error = res.status();
      failed->store(true);
      return;
    }
    r.last = *res;
    r.samples_ns.push_back(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
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
  collectives::CommOptions comm;  // bootstrap (world > 1)
};

int RunExecRank(const ExecRequest& request, const RankContext& job) {
  InitOptions init;
  // Without --cores only the first visible core is taken, so that several
  // tools can share an instance; a rank takes its own.
  if (request.cores.has_value()) {
    init.cores = request.cores;
  } else {
    init.first_visible_core_only = true;
    init.visible_core_index = static_cast<size_t>(job.local_rank);
    // One process choosing no cores at all takes the first free one; ranks
    // and an explicit NEURON_RT_VISIBLE_CORES keep their cores fixed.
    init.first_free_core = job.world <= 1 && !config::ProcessEnv()("NEURON_RT_VISIBLE_CORES");
  }
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Init(init);
  if (!rt.ok()) return RuntimeError("cannot initialize the runtime", rt.status());
  Runtime& runtime = **rt;

  ExecuteOptions exec_options;
  std::unique_ptr<collectives::Communicator> comm;
  std::unique_ptr<collectives::CommunicatorCollectives> comm_ops;
  if (job.world > 1) {
    collectives::CommOptions o = collectives::OptionsFromConfig(runtime.config(), config::ProcessEnv());
    o.rank = job.rank;
    o.world = job.world;
    o.listen_fd = job.comm.listen_fd;
    if (!job.comm.root_comm_id.empty()) o.root_comm_id = job.comm.root_comm_id;
    absl::StatusOr<std::unique_ptr<collectives::Communicator>> c = collectives::Communicator::Create(o);
    if (!c.ok()) return Error(absl::StrFormat("rank %d: %s", job.rank, c.status().message()));
    comm = std::move(*c);
    // The cores' device memory, registered with the fabric once under
    // NEURON_RT_REGISTER_HBM_MR.
    for (int id : runtime.cores()) {
      absl::StatusOr<Core*> core = runtime.GetCore(id);
      if (!core.ok()) continue;
      if (void* base = (*core)->arena().HostAddress(0)) {
        (void)comm->AddDeviceMemory(base, (*core)->arena().capacity());
      }
    }
    comm_ops = std::make_unique<collectives::CommunicatorCollectives>(comm.get());
    exec_options.collectives = comm_ops.get();
    exec_options.replica_id = job.rank;
    exec_options.replica_count = job.world;
  }

  if (!request.outfeed_dir.empty()) {
    if (absl::Status s = dump::MakeDirs(request.outfeed_dir); !s.ok()) {
      return Error(absl::StrCat("--outfeed-dir: ", s.message()));
    }
  }
  FileFeed feed(request.infeeds, request.outfeed_dir,
                request.random_inputs ? std::optional<uint64_t>(request.seed) : std::nullopt);
  exec_options.feed = &feed;

  // Read (or compile) once, load once per core.
  absl::StatusOr<ModelInput> input = OpenModelInput(request.neff_path, request.compile, runtime);
  if (!input.ok()) return Error(std::string(input.status().message()));
  std::vector<Replica> replicas(runtime.cores().size());
  for (size_t i = 0; i < replicas.size(); ++i) {
    absl::StatusOr<std::unique_ptr<Model>> model = LoadModelInput(runtime, *input, runtime.cores()[i]);
    if (!model.ok()) return RuntimeError("cannot load the NEFF", model.status());
    replicas[i].model = std::move(*model);
  }
  const Model& model = *replicas[0].model;
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
    for (const TensorInfo& t : r.model->inputs()) io_bytes += t.bytes;
    for (const TensorInfo& t : r.model->outputs())
      if (t.aliased_input < 0) io_bytes += t.bytes;  // donated ones share their input's
  }
  if (absl::Status s = CheckHostMemory(io_bytes, absl::StrFormat("the inputs and outputs of '%s'", model.name()));
      !s.ok()) {
    return RuntimeError("cannot allocate the tensors", s);
  }
  for (Replica& r : replicas) {
    if (absl::Status s = PrepareReplica(runtime, r); !s.ok()) {
      return RuntimeError("cannot allocate the tensors", s);
    }
  }
  if (absl::Status s = FillInputs(request, *inputs, replicas); !s.ok()) return Error(std::string(s.message()));

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
    RunReplica(replicas[0], warmup, iterations, exec_options, &failed, nullptr, shown);
  } else {
    std::barrier<> warmed(static_cast<std::ptrdiff_t>(replicas.size()));
    std::vector<std::thread> threads;
    for (Replica& r : replicas) {
      Progress* mine = &r == &replicas.front() ? shown : nullptr;
      threads.emplace_back([&r, warmup, iterations, &exec_options, &failed, &warmed, mine] {
        RunReplica(r, warmup, iterations, exec_options, &failed, &warmed, mine);
      });
    }
    for (std::thread& t : threads) t.join();
  }
  progress.reset();  // erase the line before the results
  for (const Replica& r : replicas) {
    if (!r.error.ok()) {
      std::string where = job.world > 1 ? absl::StrFormat("rank %d (nc%d)", job.rank, r.model->core_id())
                                        : absl::StrFormat("nc%d", r.model->core_id());
      return RuntimeError(absl::StrFormat("execution on %s failed", where), r.error);
    }
  }
  for (const Replica& r : replicas) {
    if (r.last.fail) {
      PrintError(kTool, absl::StrCat(r.last.numerical_report,
                                     " (NRT_EXEC_COMPLETED_WITH_NUM_ERR, NEURON_FAIL_ON_NAN=1)"));
      return kExitFailure;
    }
  }

  // Results of the first core.
  Replica& first = replicas[0];
  std::vector<hlo::Literal> results;
  for (size_t k = 0; k < model.outputs().size(); ++k) {
    hlo::Literal value = hlo::Literal::Zeros(model.outputs()[k].shape);
    TensorOpScope dma("tensor_read", first.outputs[k].get(), nullptr, value.mutable_data().size());
    (void)first.outputs[k]->Read(value.mutable_data().data(), 0, value.mutable_data().size());
    results.push_back(std::move(value));
  }

  json doc;
  doc["neff"] = request.neff_path;
  doc["input_kind"] = input->kind;
  doc["model"] = model.name();
  doc["target"] = model.target();
  doc["cores"] = runtime.cores();
  doc["status"] = nrt_get_status_name(first.last.status);
  if (!first.last.numerical_report.empty()) doc["numerical_report"] = first.last.numerical_report;
  doc["inputs"] = json::array();
  for (size_t k = 0; k < model.inputs().size(); ++k) {
    const TensorInfo& t = model.inputs()[k];
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
    const TensorInfo& t = model.outputs()[k];
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
    const TensorInfo& t = model.outputs()[k];
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
      j["core"] = r.model->core_id();
      per_core.push_back(j);
      if (replicas.size() > 1) {
        absl::StrAppend(&text, absl::StrFormat("nc%d: %s\n", r.model->core_id(), StatsLine(s)));
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
        cores.push_back({r.model->core_id(), &r.samples_ns,
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
    json b = StatsJson(total);
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
    absl::StatusOr<const device::InstanceType*> instance = device::SelectInstanceType(env);
    if (!instance.ok()) return Error(std::string(instance.status().message()));
    const config::Resolution res = config::Resolve(env, device::PlatformFactsFor(**instance));
    if (!res.ok()) return Error(res.init_error);
    if (res.config.visible_cores.size() < static_cast<size_t>(world)) {
      return Error(absl::StrFormat("-r %d needs %d NeuronCores, but %d are visible (%s; "
                                   "NEURON_RT_VISIBLE_CORES, NEURON_SIM_INSTANCE_TYPE)",
                                   world, world, res.config.visible_cores.size(), (*instance)->name));
    }
  }
  collectives::CommOptions base;
  if (std::optional<std::string> id = env("NEURON_RT_ROOT_COMM_ID")) base.root_comm_id = *id;
  auto run_rank = [&](const collectives::CommOptions& o) {
    RankContext job;
    job.rank = o.rank;
    job.world = o.world;
    job.local_rank = collectives::LocalRankFromEnv(env, o.rank);
    job.comm = o;
    return RunExecRank(ForRank(request, o.rank, o.world), job);
  };
  if (launch->has_value()) {
    base.rank = (*launch)->rank;
    base.world = world;
    return run_rank(base);
  }
  return collectives::ForkLocalRanks(kTool, world, base, run_rank);
}

}  // namespace neuron::runtime
