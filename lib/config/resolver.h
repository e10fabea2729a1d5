// Bookkeeping shared by the resolution rules (internal to lib/config):
// reading one variable with its type's parser, recording its effective
// value and source, and collecting diagnostics and the init error.
#ifndef NEURON_LIB_CONFIG_RESOLVER_H_
#define NEURON_LIB_CONFIG_RESOLVER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/config/config.h"

namespace neuron::config {

class Resolver {
 public:
  Resolver(const EnvLookup& env, const PlatformFacts& platform, Resolution* out);

  const PlatformFacts& platform() const { return platform_; }
  RuntimeConfig& config() { return out_->config; }
  Resolution& resolution() { return *out_; }

  // The raw text of a variable; nullopt when unset.
  std::optional<std::string> Env(std::string_view name) const;
  bool IsSet(std::string_view name) const { return Env(name).has_value(); }

  // Sets the effective value and source shown for a variable.
  void Record(std::string_view name, std::string value, Source source);
  Source SourceOf(std::string_view name) const;

  void Info(std::string_view name, std::string message);
  void Warn(std::string_view name, std::string message);
  void Error(std::string_view name, std::string message);  // init goes on
  // Makes nrt_init() fail. The first failure is the init error; later ones
  // are kept as error diagnostics so a report shows them all.
  void Fail(std::string_view name, std::string message,
            NRT_STATUS status = NRT_INVALID);
  // Fails with "NAME='text': not WHAT (accepted: ACCEPTED)".
  void FailParse(std::string_view name, std::string_view text,
                 std::string_view what, std::string_view accepted);

  // Typed reads. Unset: store the default, record it as "default", return
  // false. Valid: store it, record its canonical text as "env", return
  // true. Invalid: FailParse, keep the default, record the raw text as
  // "env", return false.
  bool ReadBool(std::string_view name, bool fallback, bool* field);
  bool ReadUnsigned(std::string_view name, uint64_t fallback, uint64_t* field,
                    uint64_t max = UINT64_MAX);
  bool ReadByteCount(std::string_view name, uint64_t fallback, uint64_t* field);
  bool ReadRangeList(std::string_view name, std::vector<int>* field);
  bool ReadString(std::string_view name, std::string fallback, std::string* field);

 private:
  const EnvLookup& env_;
  const PlatformFacts& platform_;
  Resolution* out_;
  std::map<std::string, size_t, std::less<>> index_;  // name -> values[i]
};

// The rules, grouped by subject (resolve.cc, resolve_logging.cc).
void ResolveLogging(Resolver& r);

}  // namespace neuron::config

#endif  // NEURON_LIB_CONFIG_RESOLVER_H_
