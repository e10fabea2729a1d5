// The compile cache (--cache-dir / NEURON_COMPILE_CACHE_URL), laid out as
// the Neuron SDK's: DIR/neuronxcc-<version>/MODULE_<key>/ holding
// model.neff + model.done + model.log for a success, or model.failed (the
// error) + model.log for a failure. The key is the sha256 of the compiler
// version, the normalized options and the input bytes. Entries are written
// to a temporary directory and renamed into place, so concurrent compiles
// of one module never see a torn entry: the first rename wins and the
// others keep its result.
#ifndef NEURON_LIB_COMPILER_CACHE_H_
#define NEURON_LIB_COMPILER_CACHE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::compiler {

struct CacheEntry {
  enum Kind { kMissing, kSuccess, kFailure } kind = kMissing;
  std::string dir;    // the entry's directory
  std::string neff;   // kSuccess: the NEFF bytes
  std::string error;  // kFailure: the recorded error line
};

class CompileCache {
 public:
  // `root` is the cache directory; created on first store.
  CompileCache(std::string root, std::string version) : root_(std::move(root)), version_(std::move(version)) {}

  static std::string Key(std::string_view version, const std::vector<std::string>& options,
                         std::string_view input);
  std::string EntryDir(std::string_view key) const;

  CacheEntry Lookup(std::string_view key) const;
  // Publishes an entry atomically; OK also when another process won.
  absl::Status StoreSuccess(std::string_view key, std::string_view neff, std::string_view log) const;
  absl::Status StoreFailure(std::string_view key, std::string_view error, std::string_view log) const;
  // Moves a failed entry out of the way (--retry-failed-compilation).
  absl::Status Evict(std::string_view key) const;

 private:
  absl::Status Publish(std::string_view key, const std::vector<std::pair<std::string, std::string_view>>& files) const;
  std::string root_;
  std::string version_;
};

// Lower-case hex sha256.
std::string Sha256Hex(std::string_view data);

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_CACHE_H_
