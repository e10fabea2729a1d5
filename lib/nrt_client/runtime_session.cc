#include "lib/nrt_client/runtime_session.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/support/parse.h"

namespace neuron::nrt_client {
namespace {

constexpr const char* kVisible = "NEURON_RT_VISIBLE_CORES";

std::string ArchOfFamily(uint32_t family) {
  switch (family) {
    case NRT_INSTANCE_TRN1: return "trn1";
    case NRT_INSTANCE_TRN1N: return "trn1n";
    case NRT_INSTANCE_INF2: return "inf2";
    case NRT_INSTANCE_TRN2: return "trn2";
    case NRT_INSTANCE_TRN2N: return "trn2n";
    default: return "";
  }
}

absl::Status InitError(const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("cannot initialize the runtime: ", why));
}

}  // namespace

absl::StatusOr<std::unique_ptr<RuntimeSession>> RuntimeSession::Open(const char* tool, bool quiet,
                                                                      const CoreChoice& choice) {
  absl::StatusOr<const RuntimeLibrary*> library = RuntimeLibrary::Get();
  if (!library.ok()) return library.status();
  const RuntimeLibrary& lib = **library;
  // The tool prints each failure once, itself.
  if (lib.ext().quiet_api_errors != nullptr) lib.ext().quiet_api_errors(true);
  if (lib.ext().enable_progress != nullptr) lib.ext().enable_progress(tool, quiet);

  // The user's NEURON_RT_VISIBLE_CORES, resolved to ids.
  std::optional<std::vector<int>> visible;
  if (const char* env = std::getenv(kVisible); env != nullptr && *env != '\0') {
    absl::StatusOr<std::vector<int>> ids = ParseRangeList(env);
    if (!ids.ok()) {
      return InitError(absl::StrFormat("%s=%s: %s", kVisible, env, ids.status().message()));
    }
    visible = *ids;
  }
  // The candidate sets of cores, in the order they are tried.
  std::vector<std::vector<int>> candidates;
  if (choice.cores.has_value()) {
    if (visible.has_value()) {
      for (int c : *choice.cores) {
        if (std::find(visible->begin(), visible->end(), c) == visible->end()) {
          return InitError(absl::StrFormat("--cores %s: nc%d is not among %s=%s",
                                           FormatRangeList(*choice.cores), c, kVisible,
                                           FormatRangeList(*visible)));
        }
      }
    }
    candidates.push_back(*choice.cores);
  } else if (visible.has_value()) {
    if (choice.index >= visible->size()) {
      return InitError(absl::StrFormat("%s=%s has no core number %d (counting from 0)", kVisible,
                                       FormatRangeList(*visible), choice.index));
    }
    candidates.push_back({(*visible)[choice.index]});
  } else {
    uint32_t count = 0;
    if (NRT_STATUS s = lib.sdk().get_visible_vnc_count(&count); s != NRT_SUCCESS) {
      return InitError(lib.Describe(s, "nrt_get_visible_vnc_count"));
    }
    if (choice.index >= count) {
      return InitError(absl::StrFormat("the instance has %d NeuronCore%s, and core %d was asked for",
                                       count, count == 1 ? "" : "s", choice.index));
    }
    if (choice.first_free) {
      for (uint32_t c = 0; c < count; ++c) candidates.push_back({static_cast<int>(c)});
    } else {
      candidates.push_back({static_cast<int>(choice.index)});
    }
  }

  std::vector<std::string> held;  // why each busy candidate failed
  for (const std::vector<int>& cores : candidates) {
    setenv(kVisible, FormatRangeList(cores).c_str(), 1);
    const NRT_STATUS s = lib.sdk().init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");
    if (s == NRT_SUCCESS) {
      auto session = std::unique_ptr<RuntimeSession>(new RuntimeSession(&lib));
      session->cores_ = cores;
      nrt_instance_info_t info{};
      if (lib.sdk().get_instance_info(&info, sizeof info) == NRT_SUCCESS) {
        session->arch_ = ArchOfFamily(info.family);
      }
      return session;
    }
    const std::string why = lib.Describe(s, "nrt_init");
    if (s != NRT_RESOURCE || candidates.size() == 1) return InitError(why);
    held.push_back(why);
  }
  return InitError(absl::StrCat("every visible NeuronCore is held: ", absl::StrJoin(held, "; ")));
}

RuntimeSession::~RuntimeSession() { library_->sdk().close(); }

}  // namespace neuron::nrt_client
