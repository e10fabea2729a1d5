#include "lib/nrt_client/runtime_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "neuron/nrt_status.h"

namespace neuron::nrt_client {
namespace {

constexpr const char* kSoname = "libnrt.so.1";

template <typename F>
bool Resolve(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  return *out != nullptr;
}

// The folders the tools' RUNPATH names ($ORIGIN, $ORIGIN/../lib), tried by
// hand: a dlopen that something interposes on (AddressSanitizer's, a
// preloaded shim) searches the interposer's RUNPATH instead of the
// executable's, and found no runtime in the sanitizer builds.
void* OpenBesideTheExecutable() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return nullptr;
  for (const std::filesystem::path& dir : {exe.parent_path(), exe.parent_path().parent_path() / "lib"}) {
    const std::string candidate = (dir / kSoname).string();
    if (access(candidate.c_str(), F_OK) != 0) continue;  // dlerror keeps the by-name failure
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<const RuntimeLibrary*> RuntimeLibrary::Get() {
  // Opened once; a failure is kept too, so every caller gets the same line.
  static const absl::StatusOr<const RuntimeLibrary*> library =
      []() -> absl::StatusOr<const RuntimeLibrary*> {
    void* handle = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) handle = OpenBesideTheExecutable();
    if (handle == nullptr) {
      const char* why = dlerror();
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot open the runtime library %s: %s (set LD_LIBRARY_PATH to its folder)", kSoname,
          why != nullptr ? why : "not found"));
    }
    // Kept for the process once complete; freed if it is not a runtime.
    std::unique_ptr<RuntimeLibrary> lib(new RuntimeLibrary);
    SdkFunctions& s = lib->sdk_;
    const std::pair<const char*, bool> required[] = {
        {"nrt_init", Resolve(handle, "nrt_init", &s.init)},
        {"nrt_close", Resolve(handle, "nrt_close", &s.close)},
        {"nrt_load", Resolve(handle, "nrt_load", &s.load)},
        {"nrt_load_collectives", Resolve(handle, "nrt_load_collectives", &s.load_collectives)},
        {"nrt_unload", Resolve(handle, "nrt_unload", &s.unload)},
        {"nrt_get_model_tensor_info",
         Resolve(handle, "nrt_get_model_tensor_info", &s.get_model_tensor_info)},
        {"nrt_free_model_tensor_info",
         Resolve(handle, "nrt_free_model_tensor_info", &s.free_model_tensor_info)},
        {"nrt_tensor_allocate", Resolve(handle, "nrt_tensor_allocate", &s.tensor_allocate)},
        {"nrt_tensor_free", Resolve(handle, "nrt_tensor_free", &s.tensor_free)},
        {"nrt_tensor_write", Resolve(handle, "nrt_tensor_write", &s.tensor_write)},
        {"nrt_tensor_read", Resolve(handle, "nrt_tensor_read", &s.tensor_read)},
        {"nrt_tensor_get_va", Resolve(handle, "nrt_tensor_get_va", &s.tensor_get_va)},
        {"nrt_allocate_tensor_set", Resolve(handle, "nrt_allocate_tensor_set", &s.allocate_tensor_set)},
        {"nrt_destroy_tensor_set", Resolve(handle, "nrt_destroy_tensor_set", &s.destroy_tensor_set)},
        {"nrt_add_tensor_to_tensor_set",
         Resolve(handle, "nrt_add_tensor_to_tensor_set", &s.add_tensor_to_tensor_set)},
        {"nrt_execute", Resolve(handle, "nrt_execute", &s.execute)},
        {"nrt_get_version", Resolve(handle, "nrt_get_version", &s.get_version)},
        {"nrt_get_instance_info", Resolve(handle, "nrt_get_instance_info", &s.get_instance_info)},
        {"nrt_get_visible_vnc_count",
         Resolve(handle, "nrt_get_visible_vnc_count", &s.get_visible_vnc_count)},
        {"nrt_get_vnc_memory_stats",
         Resolve(handle, "nrt_get_vnc_memory_stats", &s.get_vnc_memory_stats)},
    };
    Dl_info info{};
    // As loaded ("bin/../lib/libnrt.so.1" through the RUNPATH), tidied.
    lib->path_ = dladdr(reinterpret_cast<void*>(s.init), &info) != 0 && info.dli_fname != nullptr
                     ? std::filesystem::path(info.dli_fname).lexically_normal().string()
                     : kSoname;
    for (const auto& [name, found] : required) {
      if (!found) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "the runtime library %s has no %s (not a Neuron runtime?)", lib->path_, name));
      }
    }
    ExtraFunctions& e = lib->ext_;
    Resolve(handle, "nrt_get_last_error", &e.get_last_error);
    Resolve(handle, "nrt_tools_quiet_api_errors", &e.quiet_api_errors);
    Resolve(handle, "nrt_tools_enable_progress", &e.enable_progress);
    Resolve(handle, "nrt_tools_set_load_name", &e.set_load_name);
    Resolve(handle, "nrt_tools_describe_model", &e.describe_model);
    Resolve(handle, "nrt_tools_describe_core_memory", &e.describe_core_memory);
    Resolve(handle, "nrt_tools_free", &e.free);
    Resolve(handle, "nrt_tools_set_model_feed", &e.set_model_feed);
    Resolve(handle, "nrt_tools_set_bootstrap_listener", &e.set_bootstrap_listener);
    Resolve(handle, "nrt_tools_tensor_written", &e.tensor_written);
    Resolve(handle, "nrt_tools_last_loop_trips", &e.last_loop_trips);
    if (e.describe_model == nullptr || e.describe_core_memory == nullptr || e.free == nullptr) {
      e.describe_model = nullptr;
      e.describe_core_memory = nullptr;
      e.free = nullptr;
    }
    return lib.release();
  }();
  return library;
}

std::string RuntimeLibrary::Unavailable(std::string_view what) const {
  return absl::StrFormat("%s not available with this runtime (%s)", what, path_);
}

std::string RuntimeLibrary::Describe(NRT_STATUS status, std::string_view function) const {
  std::string message;
  if (ext_.get_last_error != nullptr) {
    const char* last = ext_.get_last_error();
    if (last != nullptr) message = last;
    // "nrt_load: why" -> "why".
    const std::string prefix = std::string(function) + ": ";
    if (absl::StartsWith(message, prefix)) message.erase(0, prefix.size());
  }
  if (message.empty()) message = std::string(function) + " failed";
  return absl::StrFormat("%s (%s)", message, nrt_get_status_name(status));
}

std::string RuntimeLibrary::VersionLine() const {
  nrt_version_t v{};
  if (sdk_.get_version(&v, sizeof v) != NRT_SUCCESS) {
    return absl::StrFormat("libnrt (version unknown), %s", path_);
  }
  v.rt_detail[sizeof v.rt_detail - 1] = '\0';
  return absl::StrFormat("libnrt %d.%d (%s), %s", v.rt_major, v.rt_minor, v.rt_detail, path_);
}

std::string RuntimeLibrary::VersionJson() const {
  nrt_version_t v{};
  nlohmann::json doc = {{"library", path_}};
  if (sdk_.get_version(&v, sizeof v) == NRT_SUCCESS) {
    v.rt_detail[sizeof v.rt_detail - 1] = '\0';
    doc["version"] = absl::StrFormat("%d.%d", v.rt_major, v.rt_minor);
    doc["detail"] = v.rt_detail;
  }
  return doc.dump();
}

std::string RuntimeVersionLine() {
  // The dynamic linker's order for the tools' dlopen: LD_LIBRARY_PATH,
  // then the tool's RUNPATH ($ORIGIN, $ORIGIN/../lib).
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("LD_LIBRARY_PATH"); env != nullptr) {
    for (absl::string_view d : absl::StrSplit(env, ':')) dirs.emplace_back(d.empty() ? "." : d);
  }
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    dirs.push_back(exe.parent_path().string());
    dirs.push_back((exe.parent_path() / ".." / "lib").string());
  }
  for (const std::string& dir : dirs) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / kSoname;
    if (access(candidate.c_str(), R_OK) == 0) {
      const std::filesystem::path found = std::filesystem::absolute(candidate, error).lexically_normal();
      return absl::StrFormat("runtime: %s (opened when a model is loaded)",
                             (error ? candidate : found).string());
    }
  }
  return absl::StrFormat("runtime: %s from the system's library path (opened when a model is loaded)",
                         kSoname);
}

}  // namespace neuron::nrt_client
