// What every file of the C API (libnrt) shares: the process-wide runtime
// between nrt_init and nrt_close, the handle types behind the opaque
// pointers of nrt/nrt.h, failure reporting, and model execution (used by
// nrt_execute and by the async COMPUTE unit alike).
//
// The C layer stays thin: argument checks and handle bookkeeping here,
// everything else in lib/runtime, lib/collectives and lib/profile.
#ifndef NEURON_LIB_NRT_API_STATE_H_
#define NEURON_LIB_NRT_API_STATE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/kernels/host_feed.h"
#include "lib/nrt/runtime_lock.h"
#include "lib/runtime/model.h"
#include "lib/runtime/runtime.h"
#include "lib/runtime/tensor_buffer.h"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"

// A loaded model. `options` carries its place in a collectives job
// (nrt_load_collectives); plain nrt_load leaves it single-device.
struct nrt_model {
  std::unique_ptr<neuron::runtime::Model> model;  // null after nrt_close
  uint32_t id = 0;                                // process-unique, from 1
  int core = 0;  // lib/runtime's logical id (nrt_get_model_info reports the vnc)
  neuron::runtime::ExecuteOptions options;
  // nrt_tools_set_model_feed's adapter; options.feed points to it.
  std::unique_ptr<neuron::kernels::HostFeed> feed;
  // Trips of the outermost while loop in the last execution that ran, and
  // that loop's time (nrt_tools_last_loop_trips). Executions may run on
  // several threads: while two run at once a reader may pair one's trips
  // with the other's time.
  std::atomic<int64_t> last_loop_trips{0};
  std::atomic<int64_t> last_loop_ns{0};
};

// A tensor: storage owned (device/host allocation), the caller's memory
// (attach_buffer), or a window on another tensor's storage (slice; the
// storage lives while any tensor uses it). Empty tensors have neither.
struct nrt_tensor {
  std::string name;
  nrt_tensor_placement_t placement = NRT_TENSOR_PLACEMENT_HOST;
  std::shared_ptr<neuron::runtime::TensorBuffer> storage;
  std::unique_ptr<neuron::runtime::TensorBuffer> window;  // set for slices

  // What reads, writes and executions use; null for an empty tensor.
  neuron::runtime::TensorBuffer* buffer() const {
    return window != nullptr ? window.get() : storage.get();
  }

  // Output completions (nrt_tensor_check_output_completion): counted each
  // time an execution finishes writing the tensor.
  std::mutex completion_mu;
  std::condition_variable completion_cv;
  uint64_t completions = 0;
  void MarkWritten();
};

namespace neuron::nrt_api {

// A tensor set: tensors by name (the model's input/output names).
struct TensorSet {
  std::map<std::string, nrt_tensor*, std::less<>> tensors;
};

// The thread's last failure: logged (as libnrt logs it), kept for
// nrt_get_last_error, and returned.
NRT_STATUS Fail(NRT_STATUS code, std::string message);
NRT_STATUS Fail(const absl::Status& status);
NRT_STATUS Fail(const char* function, const absl::Status& status);  // "function: message"
// The same for an error of lib/collectives, whose code travels as the
// message's leading status name ("NRT_TIMEOUT: rank 1 lost ..."): the code
// kept, the name dropped from the line.
NRT_STATUS FailCollectives(const char* function, const absl::Status& status);
void SetLastError(std::string message);
// nrt_tools_quiet_api_errors: Fail keeps the message for nrt_get_last_error
// but does not log it (the caller prints it).
void SetQuietApiErrors(bool quiet);
// nrt_tools_set_load_name: the calling thread's name and source file for
// its next load (both "" when unset), taken once.
std::pair<std::string, std::string> TakeLoadName();
const std::string& LastError();  // the calling thread's

// Holds the runtime for the duration of one call: shared with other calls,
// exclusive against nrt_init/nrt_close. `ok()` is false before nrt_init
// (NRT_UNINITIALIZED) and after nrt_close (NRT_CLOSED); `status()` records
// that as the last error naming `function`.
class RuntimeRef {
 public:
  explicit RuntimeRef(const char* function);
  bool ok() const { return runtime_ != nullptr; }
  runtime::Runtime* operator->() const { return runtime_; }
  runtime::Runtime& operator*() const { return *runtime_; }
  NRT_STATUS status() const;

 private:
  std::shared_lock<RuntimeLock> lock_;
  runtime::Runtime* runtime_ = nullptr;
  const char* function_;
};

// libnrt numbers cores from 0 among those the process holds: with
// NEURON_RT_VISIBLE_CORES=3,4 they are vnc 0 and 1. lib/runtime uses the
// instance's logical ids (3 and 4). A vnc outside the held ones is
// NRT_INVALID naming them. (Send/recv's lnc is the absolute id, as its
// header says.)
NRT_STATUS CoreOfVnc(const char* function, const runtime::Runtime& rt, int64_t vnc, int* core);
int VncOfCore(const runtime::Runtime& rt, int core);  // -1 when not held

// Lifecycle (api_core.cc): the lock RuntimeRef shares, and the runtime.
RuntimeLock& RuntimeMutex();
runtime::Runtime* CurrentRuntimeLocked();  // caller holds RuntimeMutex()
bool WasClosed();                          // nrt_close ran since the last init

// Live handles, so nrt_close can release the device memory and models the
// program did not free (their handles stay valid to free afterwards).
void TrackModel(nrt_model* model);
void UntrackModel(nrt_model* model);
void TrackTensor(nrt_tensor* tensor);
void UntrackTensor(nrt_tensor* tensor);
void ReleaseAllHandles();

// Each API area lets go of what it holds before the runtime closes;
// nrt_close calls these in this order, with no call in flight.
void ShutdownAsync();        // api_async.cc: drains and stops the XU workers
void ShutdownSendRecv();     // api_sendrecv.cc: closes communicators
void ShutdownProfiling();    // api_profile.cc / api_sys_trace.cc
void ShutdownCollectives();  // api_collectives.cc: leaves the global communicator
// nrt_tools_set_bootstrap_listener: device 0's next global communicator
// listens on `fd` (api_collectives.cc).
void SetBootstrapListener(int fd);

// Runs `model` once with the tensors of `inputs` / `outputs` matched to its
// tensor names (a missing or short tensor is NRT_INVALID naming it), then
// marks the outputs written. The returned status may be
// NRT_EXEC_COMPLETED_WITH_NUM_ERR (outputs written; the report is the last
// error). Counts toward NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS.
NRT_STATUS ExecuteModel(nrt_model* model, const TensorSet& inputs, TensorSet& outputs,
                        const char* function);

// Host-driven collectives (api_collectives.cc), run by the async
// COLLECTIVES unit (api_async.cc): the core a prepared context belongs to,
// running it (blocking until every rank took part), and dropping one that
// will not run.
int CollectiveContextCore(const nrt_cc_context_t* ctx);
NRT_STATUS RunCollective(nrt_cc_context_t* ctx);
void FreeCollective(nrt_cc_context_t* ctx);

// Name lists handed to callers (api_profile.cc, used by api_sys_trace.cc):
// malloc'd strings in a malloc'd array, as nrt_profile.h and
// nrt_sys_trace.h document, so free() works on each; and their release.
NRT_STATUS AllocateNameArray(const char* function, const std::vector<std::string>& names,
                             const char*** out, size_t* count);
void FreeNameArray(const char** names, size_t count);
// Adds `event_type` to / removes it from a set of disabled system-trace
// event types; an unknown type is NRT_INVALID listing the known ones.
NRT_STATUS SetEventTypeCaptured(const char* function, const char* event_type, bool enabled,
                                std::set<std::string>* disabled);

// NRT dtype of an HLO element type (NRT_DTYPE_UNKNOWN where none fits).
nrt_dtype_t ToNrtDtype(hlo::ElementType type);

}  // namespace neuron::nrt_api

#endif  // NEURON_LIB_NRT_API_STATE_H_
