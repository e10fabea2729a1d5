// libnrt.so.1 as the dynamic linker finds it, opened when a tool first
// needs a runtime (so --help and --version without a model start as fast
// as a program that links nothing): LD_LIBRARY_PATH first (the SDK's
// /opt/aws/neuron/lib, or a stand-in), then the tool's own $ORIGIN and
// $ORIGIN/../lib (out/, or $prefix/lib when installed).
//
// `sdk` holds the SDK's public functions the tools call: a library without
// one of them is refused. `ext` holds what only the project's library has
// (nrt_get_last_error, nrt/nrt_tools_ext.h): null where absent, and the
// tools then do without and say so in one line (Unavailable).
#ifndef NEURON_LIB_NRT_CLIENT_RUNTIME_LIBRARY_H_
#define NEURON_LIB_NRT_CLIENT_RUNTIME_LIBRARY_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_tools_ext.h"
#include "nrt/nrt_version.h"

namespace neuron::nrt_client {

struct SdkFunctions {
  decltype(&::nrt_init) init = nullptr;
  decltype(&::nrt_close) close = nullptr;
  decltype(&::nrt_load) load = nullptr;
  decltype(&::nrt_load_collectives) load_collectives = nullptr;
  decltype(&::nrt_unload) unload = nullptr;
  decltype(&::nrt_get_model_tensor_info) get_model_tensor_info = nullptr;
  decltype(&::nrt_free_model_tensor_info) free_model_tensor_info = nullptr;
  decltype(&::nrt_tensor_allocate) tensor_allocate = nullptr;
  decltype(&::nrt_tensor_free) tensor_free = nullptr;
  decltype(&::nrt_tensor_write) tensor_write = nullptr;
  decltype(&::nrt_tensor_read) tensor_read = nullptr;
  decltype(&::nrt_tensor_get_va) tensor_get_va = nullptr;
  decltype(&::nrt_allocate_tensor_set) allocate_tensor_set = nullptr;
  decltype(&::nrt_destroy_tensor_set) destroy_tensor_set = nullptr;
  decltype(&::nrt_add_tensor_to_tensor_set) add_tensor_to_tensor_set = nullptr;
  decltype(&::nrt_execute) execute = nullptr;
  decltype(&::nrt_get_version) get_version = nullptr;
  decltype(&::nrt_get_instance_info) get_instance_info = nullptr;
  decltype(&::nrt_get_visible_vnc_count) get_visible_vnc_count = nullptr;
  decltype(&::nrt_get_vnc_memory_stats) get_vnc_memory_stats = nullptr;
};

struct ExtraFunctions {
  decltype(&::nrt_get_last_error) get_last_error = nullptr;
  decltype(&::nrt_tools_quiet_api_errors) quiet_api_errors = nullptr;
  decltype(&::nrt_tools_enable_progress) enable_progress = nullptr;
  decltype(&::nrt_tools_set_load_name) set_load_name = nullptr;
  decltype(&::nrt_tools_describe_model) describe_model = nullptr;
  decltype(&::nrt_tools_describe_core_memory) describe_core_memory = nullptr;
  decltype(&::nrt_tools_set_model_feed) set_model_feed = nullptr;
  decltype(&::nrt_tools_set_bootstrap_listener) set_bootstrap_listener = nullptr;
  decltype(&::nrt_tools_tensor_written) tensor_written = nullptr;
  decltype(&::nrt_tools_last_loop_trips) last_loop_trips = nullptr;
  decltype(&::nrt_tools_free) free = nullptr;
};

class RuntimeLibrary {
 public:
  // Opens the library once per process; later calls return the same one.
  // The error says what was looked for and why it failed (dlerror).
  static absl::StatusOr<const RuntimeLibrary*> Get();

  const SdkFunctions& sdk() const { return sdk_; }
  const ExtraFunctions& ext() const { return ext_; }
  // The file the dynamic linker loaded (dladdr of nrt_init).
  const std::string& path() const { return path_; }

  // The project's own (simulated) runtime, known by its extras: its device
  // memory is this process's memory, so a device tensor's
  // nrt_tensor_get_va may be written in place.
  bool device_memory_is_host() const { return ext_.describe_model != nullptr; }

  // "<what> not available with this runtime (<path>)": the one line a tool
  // prints for what it cannot show.
  std::string Unavailable(std::string_view what) const;

  // "<message> (NRT_NAME)" for a failed call: the library's last error
  // where it has nrt_get_last_error (the leading "nrt_xxx: " dropped, the
  // tools name the step themselves), else "<function> failed".
  std::string Describe(NRT_STATUS status, std::string_view function) const;

  // "libnrt 2.0 (neuron-tools 1.2 (simulated device)), /path/libnrt.so.1".
  std::string VersionLine() const;
  // {"library": path, "version": "2.0", "detail": rt_detail}: --json's
  // "runtime".
  std::string VersionJson() const;

 private:
  RuntimeLibrary() = default;
  SdkFunctions sdk_;
  ExtraFunctions ext_;
  std::string path_;
};

// --version's second line, without opening the library (that would cost
// more than the rest of the tool's start): "runtime: /path/libnrt.so.1
// (opened when a model is loaded)", the file the dynamic linker would find
// in LD_LIBRARY_PATH, next to the tool or in ../lib; else it names the
// system's library path. The version itself is in --json's "runtime".
std::string RuntimeVersionLine();

}  // namespace neuron::nrt_client

#endif  // NEURON_LIB_NRT_CLIENT_RUNTIME_LIBRARY_H_
