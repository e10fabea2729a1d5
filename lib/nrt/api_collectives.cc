// Collectives outside and inside NEFFs: the process-wide global
// communicator, the host-buffer barrier and all-gather, the collectives
// context of a NEFF loaded with nrt_load_collectives, and the collectives
// nrta_cc_prepare captures for the async COLLECTIVES unit.
//
// One communicator per process: rank r of it is global device id r, one
// device per process (the engine's model, see executor_collectives.h). It
// comes from nrt_build_global_comm / nrt_cc_global_comm_init, or from the
// first nrt_load_collectives (or barrier / all-gather) when none exists.
// Its operations run one at a time: every rank must issue them in the same
// order, and the engine's step counters assume it.
//
// Tensor lists of nrta_cc_prepare: input->tensors[i] pairs with
// output->tensors[i], and each pair is one collective over the whole bytes
// of both tensors, run in list order. Every member of the replica group
// passes the same number of pairs with the same sizes. Per pair, with n
// members and element size e:
//   all-gather:     out = n * in bytes, member k's input at block k;
//   all-reduce:     out = in bytes, element-wise reduction (in may be out);
//   reduce-scatter: in = n * out bytes, out = block `rank` of the reduction.
// Ranks of the global communicator outside the group run their own group's
// collective at the same point (the groups partition the ranks, as HLO's
// replica groups do).
#include <atomic>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/collectives/communicator.h"
#include "lib/collectives/executor_collectives.h"
#include "lib/collectives/launch.h"
#include "lib/nrt/api_state.h"
#include "lib/runtime/status.h"
#include "nrt/nrt_async.h"

// A prepared collective (nrta_cc_prepare). Tensors are the caller's: they
// are resolved again when the collective runs, as executions do.
struct nrt_cc_context {
  int core = 0;  // lib/runtime's logical id of comm->vnc
  nrt_cc_op_type_t cc_op = NRT_CC_ALLREDUCE;
  neuron::collectives::DataType type = neuron::collectives::DataType::kU8;
  neuron::collectives::ReduceOp op = neuron::collectives::ReduceOp::kSum;
  size_t elem_bytes = 1;
  std::vector<int> group;  // global device ids, in member order
  uint32_t rank = 0;       // this process's index in `group`
  std::vector<nrt_tensor*> inputs, outputs;
  std::vector<uint64_t> input_bytes, output_bytes;  // as prepared
};

namespace neuron::nrt_api {
namespace {

using collectives::Communicator;
using collectives::DataType;
using collectives::ReduceOp;

struct Global {
  std::unique_ptr<Communicator> comm;
  int vnc = -1;
  uint32_t rank = 0;
  uint32_t world = 1;
};

// Guards g_global and serializes the operations on it.
std::mutex g_mu;
std::unique_ptr<Global> g_global;  // guarded by g_mu

// The identity of g_global, readable while an operation holds g_mu.
std::mutex g_id_mu;
bool g_has_global = false;  // guarded by g_id_mu
uint32_t g_rank = 0, g_world = 1;

// The engine's error as a runtime status (its code survives Model::Execute);
// Unimplemented stays as it is, the planner falls back on it.
absl::Status ToRuntime(absl::Status status) {
  if (status.ok() || status.code() == absl::StatusCode::kUnimplemented) return status;
  return runtime::RtError(collectives::NrtStatusOf(status), std::string(status.message()));
}

// The global communicator for device `id` of `count`, built when there is
// none. Caller holds g_mu and the runtime. `check_vnc`: the core must match
// too (the explicit global-comm calls); a model's core need not.
// nrt_tools_set_bootstrap_listener's socket, taken by the next bootstrap.
std::atomic<int> g_bootstrap_listen_fd{-1};

NRT_STATUS EnsureGlobal(const char* function, runtime::Runtime& rt, int vnc, uint32_t id,
                        uint32_t count, bool check_vnc, Global** out) {
  if (count == 0 || id >= count) {
    return Fail(NRT_INVALID, absl::StrFormat("%s: device id %u is not within a count of %u",
                                             function, id, count));
  }
  if (g_global != nullptr) {
    const Global& g = *g_global;
    if (g.rank != id || g.world != count || (check_vnc && g.vnc != vnc)) {
      return Fail(NRT_INVALID,
                  absl::StrFormat("%s: the global communicator is already device %u of %u on core "
                                  "%d; this call asks for device %u of %u on core %d",
                                  function, g.rank, g.world, g.vnc, id, count, vnc));
    }
    *out = g_global.get();
    return NRT_SUCCESS;
  }
  if (vnc >= 0) {
    int core = 0;
    if (NRT_STATUS s = CoreOfVnc(function, rt, vnc, &core); s != NRT_SUCCESS) return s;
  }
  collectives::CommOptions options = collectives::OptionsFromConfig(rt.config(), config::ProcessEnv());
  options.rank = static_cast<int>(id);
  options.world = static_cast<int>(count);
  if (id == 0) options.listen_fd = g_bootstrap_listen_fd.exchange(-1);
  absl::StatusOr<std::unique_ptr<Communicator>> comm = Communicator::Create(options);
  if (!comm.ok()) {
    return FailCollectives(function, comm.status());
  }
  auto g = std::make_unique<Global>();
  g->comm = std::move(*comm);
  g->vnc = vnc;
  g->rank = id;
  g->world = count;
  g_global = std::move(g);
  {
    std::lock_guard<std::mutex> lock(g_id_mu);
    g_has_global = true;
    g_rank = id;
    g_world = count;
  }
  *out = g_global.get();
  return NRT_SUCCESS;
}

// The executor's collectives for a NEFF of `replicas` devices over the
// global communicator. Replica i is global device i; a NEFF with fewer
// devices than the communicator runs its "all replicas" groups over
// devices 0..replicas-1. Looked up per call, so a model outliving
// nrt_close fails cleanly instead of using a destroyed communicator.
class GlobalCollectiveOps : public kernels::CollectiveOps {
 public:
  explicit GlobalCollectiveOps(int replicas) : replicas_(replicas) {}

  absl::Status AllReduce(const kernels::CollectiveCall& call, hlo::Opcode reduction,
                         const void* in, void* out, int64_t count) override {
    std::lock_guard<std::mutex> lock(g_mu);
    absl::StatusOr<kernels::CollectiveCall> c = Resolve(call);
    if (!c.ok()) return c.status();
    collectives::CommunicatorCollectives ops(g_global->comm.get());
    return ToRuntime(ops.AllReduce(*c, reduction, in, out, count));
  }
  absl::Status AllGather(const kernels::CollectiveCall& call, const void* in, void* out,
                         int64_t bytes) override {
    std::lock_guard<std::mutex> lock(g_mu);
    absl::StatusOr<kernels::CollectiveCall> c = Resolve(call);
    if (!c.ok()) return c.status();
    collectives::CommunicatorCollectives ops(g_global->comm.get());
    return ToRuntime(ops.AllGather(*c, in, out, bytes));
  }
  absl::Status CollectivePermute(const kernels::CollectiveCall& call,
                                 const std::vector<std::pair<int64_t, int64_t>>& pairs,
                                 const void* in, void* out, int64_t bytes) override {
    std::lock_guard<std::mutex> lock(g_mu);
    absl::StatusOr<kernels::CollectiveCall> c = Resolve(call);
    if (!c.ok()) return c.status();
    collectives::CommunicatorCollectives ops(g_global->comm.get());
    return ToRuntime(ops.CollectivePermute(*c, pairs, in, out, bytes));
  }

 private:
  // Caller holds g_mu.
  absl::StatusOr<kernels::CollectiveCall> Resolve(const kernels::CollectiveCall& call) const {
    if (g_global == nullptr) {
      return runtime::RtError(NRT_CLOSED,
                              "the global communicator is gone (nrt_close ran since the load)");
    }
    kernels::CollectiveCall c = call;
    if (c.replica_groups.empty() && replicas_ < static_cast<int>(g_global->world)) {
      std::vector<int64_t> all(static_cast<size_t>(replicas_));
      for (int i = 0; i < replicas_; ++i) all[static_cast<size_t>(i)] = i;
      c.replica_groups.push_back(std::move(all));
    }
    return c;
  }

  int replicas_;
};

// One adapter per NEFF device count, alive for the process: loaded models
// keep pointers to them.
kernels::CollectiveOps* OpsFor(int replicas) {
  static std::mutex mu;
  static auto* adapters = new std::map<int, std::unique_ptr<GlobalCollectiveOps>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<GlobalCollectiveOps>& ops = (*adapters)[replicas];
  if (ops == nullptr) ops = std::make_unique<GlobalCollectiveOps>(replicas);
  return ops.get();
}

std::optional<DataType> EngineType(nrt_dtype_t dtype) {
  switch (dtype) {
    case NRT_DTYPE_UINT8: return DataType::kU8;
    case NRT_DTYPE_INT8: return DataType::kS8;
    case NRT_DTYPE_UINT16: return DataType::kU16;
    case NRT_DTYPE_INT16: return DataType::kS16;
    case NRT_DTYPE_UINT32: return DataType::kU32;
    case NRT_DTYPE_INT32: return DataType::kS32;
    case NRT_DTYPE_UINT64: return DataType::kU64;
    case NRT_DTYPE_INT64: return DataType::kS64;
    case NRT_DTYPE_FLOAT16: return DataType::kF16;
    case NRT_DTYPE_BFLOAT16: return DataType::kBF16;
    case NRT_DTYPE_FLOAT32: return DataType::kF32;
    case NRT_DTYPE_FP32R: return DataType::kF32;  // fp32 storage, reduced-precision math on hardware
    default: return std::nullopt;
  }
}

bool IsFp8(nrt_dtype_t dtype) {
  return dtype == NRT_DTYPE_FP8_E3 || dtype == NRT_DTYPE_FP8_E4 || dtype == NRT_DTYPE_FP8_E5;
}

const char* CcOpName(nrt_cc_op_type_t op) {
  switch (op) {
    case NRT_CC_ALLGATHER: return "all-gather";
    case NRT_CC_ALLREDUCE: return "all-reduce";
    case NRT_CC_REDUCESCATTER: return "reduce-scatter";
  }
  return "unknown";
}

bool Overlap(const char* a, size_t an, const char* b, size_t bn) {
  return an > 0 && bn > 0 && a < b + bn && b < a + an;
}

// Checks one side's tensor list of nrta_cc_prepare.
NRT_STATUS CheckList(const char* side, const nrt_tensor_list_t* list) {
  if (list == nullptr) {
    return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: null %s tensor list", side));
  }
  if (list->num_tensors > 0 && list->tensors == nullptr) {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrta_cc_prepare: %s list of %d tensors has a null array", side,
                                list->num_tensors));
  }
  for (size_t i = 0; i < list->num_tensors; ++i) {
    const nrt_tensor* t = list->tensors[i];
    if (t == nullptr) {
      return Fail(NRT_INVALID_HANDLE,
                  absl::StrFormat("nrta_cc_prepare: %s tensor %d is null", side, i));
    }
    if (t->buffer() == nullptr) {
      return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: %s tensor %d ('%s') has no storage",
                                               side, i, t->name));
    }
  }
  return NRT_SUCCESS;
}

// The collective of one tensor pair. Caller holds g_mu when members > 1.
NRT_STATUS RunPair(const nrt_cc_context& ctx, size_t i, char* in, size_t in_bytes, char* out,
                   size_t out_bytes) {
  const char* kFn = "nrta_cc_schedule";
  const size_t n = ctx.group.size();
  std::vector<char> staged;
  // The engine reads its input while writing the output: only an in-place
  // all-reduce may share bytes.
  if (Overlap(in, in_bytes, out, out_bytes) && !(ctx.cc_op == NRT_CC_ALLREDUCE && in == out)) {
    staged.assign(in, in + in_bytes);
    in = staged.data();
  }
  if (n == 1) {  // a group of one: the collective is a copy
    if (in != out && out_bytes > 0) std::memmove(out, in, out_bytes);
    return NRT_SUCCESS;
  }
  if (g_global == nullptr) {
    return Fail(NRT_INVALID,
                absl::StrFormat("%s: %s of tensor pair %d: the global communicator is gone "
                                "(nrt_close ran since nrta_cc_prepare)",
                                kFn, CcOpName(ctx.cc_op), i));
  }
  const collectives::Groups groups{ctx.group};
  Communicator& comm = *g_global->comm;
  absl::Status st;
  switch (ctx.cc_op) {
    case NRT_CC_ALLGATHER:
      st = comm.AllGather(in, out, in_bytes, DataType::kU8, groups);
      break;
    case NRT_CC_ALLREDUCE:
      st = comm.AllReduce(in, out, in_bytes / ctx.elem_bytes, ctx.type, ctx.op, groups);
      break;
    case NRT_CC_REDUCESCATTER:
      st = comm.ReduceScatter(in, out, out_bytes / ctx.elem_bytes, ctx.type, ctx.op, groups);
      break;
  }
  if (!st.ok()) {
    return FailCollectives(absl::StrFormat("%s: %s of tensor pair %d", kFn, CcOpName(ctx.cc_op), i).c_str(),
                      st);
  }
  return NRT_SUCCESS;
}

}  // namespace

// Called by nrt_close with the runtime held exclusively: no operation runs.
void ShutdownCollectives() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_global.reset();
  std::lock_guard<std::mutex> id_lock(g_id_mu);
  g_has_global = false;
  g_rank = 0;
  g_world = 1;
}

absl::StatusOr<runtime::ExecuteOptions> CollectivesForLoad(int vnc, uint32_t ctx_device_id,
                                                           uint32_t ctx_device_count) {
  if (ctx_device_count == 1) return runtime::ExecuteOptions{};  // one device: no communicator
  RuntimeRef rt("nrt_load_collectives");
  if (!rt.ok()) {
    return runtime::RtError(WasClosed() ? NRT_CLOSED : NRT_UNINITIALIZED,
                            "the runtime is not initialized (nrt_init)");
  }
  std::lock_guard<std::mutex> lock(g_mu);
  Global* g = g_global.get();
  if (g == nullptr) {
    if (NRT_STATUS s = EnsureGlobal("nrt_load_collectives", *rt, vnc, ctx_device_id,
                                    ctx_device_count, /*check_vnc=*/false, &g);
        s != NRT_SUCCESS) {
      return runtime::RtError(s, LastError());
    }
  }
  // Replica i of the NEFF is global device i: this process must be device
  // ctx_device_id of the global communicator, which must be as large.
  if (g->rank != ctx_device_id || g->world < ctx_device_count) {
    return runtime::RtError(
        NRT_INVALID,
        absl::StrFormat("device %u of %u does not fit the global communicator, where this process "
                        "is device %u of %u",
                        ctx_device_id, ctx_device_count, g->rank, g->world));
  }
  runtime::ExecuteOptions options;
  options.collectives = OpsFor(static_cast<int>(ctx_device_count));
  options.replica_id = static_cast<int>(ctx_device_id);
  options.replica_count = static_cast<int>(ctx_device_count);
  return options;
}

void SetBootstrapListener(int fd) { g_bootstrap_listen_fd.store(fd); }

int CollectiveContextCore(const nrt_cc_context_t* ctx) { return ctx != nullptr ? ctx->core : 0; }

// Called holding the runtime (the async worker's RuntimeRef).
NRT_STATUS RunCollective(nrt_cc_context_t* ctx) {
  const char* kFn = "nrta_cc_schedule";
  if (ctx == nullptr) return Fail(NRT_INVALID_HANDLE, "nrta_cc_schedule: null collective context");
  // Resolved now: the tensors may have changed since nrta_cc_prepare.
  struct Span {
    char* in;
    size_t in_bytes;
    char* out;
    size_t out_bytes;
  };
  std::vector<Span> spans;
  for (size_t i = 0; i < ctx->inputs.size(); ++i) {
    runtime::TensorBuffer* in = ctx->inputs[i]->buffer();
    runtime::TensorBuffer* out = ctx->outputs[i]->buffer();
    if (in == nullptr || out == nullptr || in->size() != ctx->input_bytes[i] ||
        out->size() != ctx->output_bytes[i]) {
      return Fail(NRT_INVALID,
                  absl::StrFormat("%s: %s of tensor pair %d: a tensor lost its storage or changed "
                                  "size since nrta_cc_prepare",
                                  kFn, CcOpName(ctx->cc_op), i));
    }
    spans.push_back({static_cast<char*>(in->data()), in->size(), static_cast<char*>(out->data()),
                     out->size()});
  }
  std::unique_lock<std::mutex> lock(g_mu, std::defer_lock);
  if (ctx->group.size() > 1) lock.lock();
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    if (NRT_STATUS st = RunPair(*ctx, i, s.in, s.in_bytes, s.out, s.out_bytes); st != NRT_SUCCESS) {
      return st;
    }
    ctx->outputs[i]->MarkWritten();
  }
  return NRT_SUCCESS;
}

void FreeCollective(nrt_cc_context_t* ctx) { delete ctx; }

}  // namespace neuron::nrt_api

using namespace neuron::nrt_api;  // NOLINT: the C API is this file's whole job

namespace {

NRT_STATUS BuildGlobal(const char* function, int vnc, uint32_t id, uint32_t count) {
  RuntimeRef rt(function);
  if (!rt.ok()) return rt.status();
  std::lock_guard<std::mutex> lock(g_mu);
  Global* g = nullptr;
  return EnsureGlobal(function, *rt, vnc, id, count, /*check_vnc=*/true, &g);
}

}  // namespace

extern "C" {

NRT_STATUS nrt_build_global_comm(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count) {
  return BuildGlobal("nrt_build_global_comm", vnc, g_device_id, g_device_count);
}

NRT_STATUS nrt_cc_global_comm_init(uint32_t vnc, uint32_t g_device_id, uint32_t g_device_count) {
  if (vnc > static_cast<uint32_t>(INT32_MAX)) {
    return Fail(NRT_INVALID, absl::StrFormat("nrt_cc_global_comm_init: core %u is out of range", vnc));
  }
  return BuildGlobal("nrt_cc_global_comm_init", static_cast<int>(vnc), g_device_id, g_device_count);
}

NRT_STATUS nrt_barrier(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count) {
  RuntimeRef rt("nrt_barrier");
  if (!rt.ok()) return rt.status();
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_global == nullptr && g_device_count == 1 && g_device_id == 0) return NRT_SUCCESS;
  Global* g = nullptr;
  if (NRT_STATUS s = EnsureGlobal("nrt_barrier", *rt, vnc, g_device_id, g_device_count,
                                  /*check_vnc=*/false, &g);
      s != NRT_SUCCESS) {
    return s;
  }
  absl::Status st = g->comm->Barrier();
  return st.ok() ? NRT_SUCCESS : FailCollectives("nrt_barrier", st);
}

NRT_STATUS nrt_all_gather(int32_t vnc, uint32_t g_device_id, uint32_t g_device_count,
                          uint32_t rank_input_size, void* input, void* output) {
  if (rank_input_size > 0 && (input == nullptr || output == nullptr)) {
    return Fail(NRT_INVALID, "nrt_all_gather: null input or output buffer");
  }
  RuntimeRef rt("nrt_all_gather");
  if (!rt.ok()) return rt.status();
  std::lock_guard<std::mutex> lock(g_mu);
  const size_t bytes = rank_input_size;
  if (g_global == nullptr && g_device_count == 1 && g_device_id == 0) {
    if (bytes > 0) std::memmove(output, input, bytes);
    return NRT_SUCCESS;
  }
  Global* g = nullptr;
  if (NRT_STATUS s = EnsureGlobal("nrt_all_gather", *rt, vnc, g_device_id, g_device_count,
                                  /*check_vnc=*/false, &g);
      s != NRT_SUCCESS) {
    return s;
  }
  if (bytes == 0) return NRT_SUCCESS;
  const char* in = static_cast<const char*>(input);
  std::vector<char> staged;
  if (Overlap(in, bytes, static_cast<const char*>(output), bytes * g->world)) {
    staged.assign(in, in + bytes);  // in place (input inside output): the engine needs a copy
    in = staged.data();
  }
  absl::Status st = g->comm->AllGather(in, output, bytes, neuron::collectives::DataType::kU8);
  return st.ok() ? NRT_SUCCESS : FailCollectives("nrt_all_gather", st);
}

NRT_STATUS nrta_cc_prepare(nrt_cc_comm_t* comm, nrt_tensor_list_t* input, nrt_tensor_list_t* output,
                           nrt_dtype_t dtype, nrt_op_type_t op, nrt_cc_op_type_t cc_op,
                           nrt_cc_context_t** cc_ctx) {
  static constexpr const char* kFn = "nrta_cc_prepare";
  using neuron::collectives::DataTypeSize;
  if (cc_ctx == nullptr) return Fail(NRT_INVALID, "nrta_cc_prepare: null context pointer");
  *cc_ctx = nullptr;
  if (comm == nullptr) return Fail(NRT_INVALID, "nrta_cc_prepare: null communicator");
  if (cc_op != NRT_CC_ALLGATHER && cc_op != NRT_CC_ALLREDUCE && cc_op != NRT_CC_REDUCESCATTER) {
    return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: unknown collective type %d",
                                             static_cast<int>(cc_op)));
  }
  // Operation: the engine reduces with sum, max and min.
  ReduceOp reduce = ReduceOp::kSum;
  switch (op) {
    case NRT_OP_ADD: reduce = ReduceOp::kSum; break;
    case NRT_OP_MAX: reduce = ReduceOp::kMax; break;
    case NRT_OP_MIN: reduce = ReduceOp::kMin; break;
    case NRT_OP_FMA:
      return Fail(NRT_INVALID,
                  "nrta_cc_prepare: NRT_OP_FMA is not a reduction the collectives engine has "
                  "(use NRT_OP_ADD, NRT_OP_MAX or NRT_OP_MIN)");
    default:
      return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: unknown operation %d",
                                               static_cast<int>(op)));
  }
  // Element type: all-gather moves bytes, so any sized type does; the
  // reductions need one the engine computes in.
  std::optional<DataType> type = EngineType(dtype);
  size_t elem = 0;
  if (type.has_value()) {
    elem = DataTypeSize(*type);
  } else if (IsFp8(dtype)) {
    if (cc_op != NRT_CC_ALLGATHER) {
      return Fail(NRT_INVALID,
                  absl::StrFormat("nrta_cc_prepare: the collectives engine cannot reduce fp8 (dtype "
                                  "%d); only all-gather moves it",
                                  static_cast<int>(dtype)));
    }
    elem = 1;
  } else {
    return Fail(NRT_INVALID,
                absl::StrFormat("nrta_cc_prepare: unknown or invalid dtype %d", static_cast<int>(dtype)));
  }
  // Replica group.
  if (comm->rank_n == 0 || comm->replica_group == nullptr) {
    return Fail(NRT_INVALID, "nrta_cc_prepare: empty replica group (rank_n 0 or a null array)");
  }
  if (comm->rank >= comm->rank_n) {
    return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: rank %u is outside the replica group "
                                             "of %u",
                                             comm->rank, comm->rank_n));
  }
  if (comm->ctx_device_count > 0 && comm->ctx_device_id >= comm->ctx_device_count) {
    return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: ctx device id %u is not within a count "
                                             "of %u",
                                             comm->ctx_device_id, comm->ctx_device_count));
  }
  std::vector<int> group(comm->replica_group, comm->replica_group + comm->rank_n);
  {
    std::set<int> unique;
    for (uint32_t i = 0; i < comm->rank_n; ++i) {
      if (comm->replica_group[i] > static_cast<uint32_t>(INT32_MAX) ||
          !unique.insert(static_cast<int>(comm->replica_group[i])).second) {
        return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: replica group entry %d (device %u) "
                                                 "is repeated or out of range",
                                                 i, comm->replica_group[i]));
      }
    }
  }
  bool has_global = false;
  uint32_t rank = 0, world = 1;
  {
    std::lock_guard<std::mutex> lock(g_id_mu);
    has_global = g_has_global;
    rank = g_rank;
    world = g_world;
  }
  if (has_global) {
    for (uint32_t i = 0; i < comm->rank_n; ++i) {
      if (comm->replica_group[i] >= world) {
        return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: replica group names device %u, "
                                                 "outside the global communicator's %u devices",
                                                 comm->replica_group[i], world));
      }
    }
    if (comm->replica_group[comm->rank] != rank) {
      return Fail(NRT_INVALID,
                  absl::StrFormat("nrta_cc_prepare: replica group entry %u (this rank) is device %u, "
                                  "but this process is device %u of the global communicator",
                                  comm->rank, comm->replica_group[comm->rank], rank));
    }
  } else if (comm->rank_n > 1) {
    return Fail(NRT_INVALID,
                "nrta_cc_prepare: no global communicator (call nrt_cc_global_comm_init first)");
  }
  // Tensors.
  if (NRT_STATUS s = CheckList("input", input); s != NRT_SUCCESS) return s;
  if (NRT_STATUS s = CheckList("output", output); s != NRT_SUCCESS) return s;
  if (input->num_tensors == 0 || input->num_tensors != output->num_tensors) {
    return Fail(NRT_INVALID, absl::StrFormat("nrta_cc_prepare: %d input and %d output tensors (need "
                                             "the same number, at least one)",
                                             input->num_tensors, output->num_tensors));
  }
  RuntimeRef rt(kFn);
  if (!rt.ok()) return rt.status();
  int core = 0;
  if (NRT_STATUS s = CoreOfVnc(kFn, *rt, comm->vnc, &core); s != NRT_SUCCESS) return s;
  auto ctx = std::make_unique<nrt_cc_context>();
  const uint64_t n = comm->rank_n;
  for (size_t i = 0; i < input->num_tensors; ++i) {
    nrt_tensor* in = input->tensors[i];
    nrt_tensor* out = output->tensors[i];
    const uint64_t ib = in->buffer()->size(), ob = out->buffer()->size();
    const uint64_t want = cc_op == NRT_CC_ALLGATHER ? ib * n : cc_op == NRT_CC_REDUCESCATTER ? ib / n : ib;
    const uint64_t unit = cc_op == NRT_CC_REDUCESCATTER ? ob : ib;
    if ((cc_op == NRT_CC_REDUCESCATTER && ib != ob * n) || ob != want || unit % elem != 0) {
      return Fail(NRT_INVALID,
                  absl::StrFormat("nrta_cc_prepare: %s pair %d: input '%s' is %d bytes and output "
                                  "'%s' %d; over %d members of %d-byte elements the output must be "
                                  "%s",
                                  CcOpName(cc_op), i, in->name, ib, out->name, ob, n, elem,
                                  cc_op == NRT_CC_ALLGATHER    ? "members x input bytes"
                                  : cc_op == NRT_CC_ALLREDUCE  ? "the input's size"
                                                               : "input bytes / members"));
    }
    ctx->inputs.push_back(in);
    ctx->outputs.push_back(out);
    ctx->input_bytes.push_back(ib);
    ctx->output_bytes.push_back(ob);
  }
  ctx->core = core;
  ctx->cc_op = cc_op;
  ctx->type = type.value_or(DataType::kU8);
  ctx->op = reduce;
  ctx->elem_bytes = elem;
  ctx->group = std::move(group);
  ctx->rank = comm->rank;
  *cc_ctx = ctx.release();
  return NRT_SUCCESS;
}

}  // extern "C"
