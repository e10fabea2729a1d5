#include "lib/config/resolver.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "lib/support/parse.h"

namespace neuron::config {

Resolver::Resolver(const EnvLookup& env, const PlatformFacts& platform,
                   Resolution* out)
    : env_(env), platform_(platform), out_(out) {
  for (const VariableSpec& spec : AllVariables()) {
    index_[spec.name] = out_->values.size();
    out_->values.push_back({spec.name, "", Source::kDefault});
  }
}

std::optional<std::string> Resolver::Env(std::string_view name) const {
  if (!env_) return std::nullopt;
  return env_(name);
}

void Resolver::Record(std::string_view name, std::string value, Source source) {
  auto it = index_.find(name);
  if (it == index_.end()) return;  // every caller names a table row
  out_->values[it->second].value = std::move(value);
  out_->values[it->second].source = source;
}

Source Resolver::SourceOf(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? Source::kDefault : out_->values[it->second].source;
}

void Resolver::Info(std::string_view name, std::string message) {
  out_->diagnostics.push_back({Severity::kInfo, std::string(name), std::move(message)});
}

void Resolver::Warn(std::string_view name, std::string message) {
  out_->diagnostics.push_back(
      {Severity::kWarning, std::string(name), std::move(message)});
}

void Resolver::Error(std::string_view name, std::string message) {
  out_->diagnostics.push_back({Severity::kError, std::string(name), std::move(message)});
}

void Resolver::Fail(std::string_view name, std::string message, NRT_STATUS status) {
  if (out_->init_status == NRT_SUCCESS) {
    out_->init_status = status;
    out_->init_error = std::move(message);
  } else {
    Error(name, std::move(message));
  }
}

void Resolver::FailParse(std::string_view name, std::string_view text,
                         std::string_view what, std::string_view accepted) {
  Fail(name, absl::StrFormat("%s='%s': not %s (accepted: %s)", name, text, what,
                             accepted));
}

bool Resolver::ReadBool(std::string_view name, bool fallback, bool* field) {
  *field = fallback;
  std::optional<std::string> text = Env(name);
  if (!text) {
    Record(name, fallback ? "true" : "false", Source::kDefault);
    return false;
  }
  auto value = ParseBool(*text);
  if (!value.ok()) {
    Record(name, *text, Source::kEnv);
    FailParse(name, *text, "a boolean", "0, 1, false, true in any case");
    return false;
  }
  *field = *value;
  Record(name, *value ? "true" : "false", Source::kEnv);
  return true;
}

bool Resolver::ReadUnsigned(std::string_view name, uint64_t fallback,
                            uint64_t* field, uint64_t max) {
  *field = fallback;
  std::optional<std::string> text = Env(name);
  if (!text) {
    Record(name, std::to_string(fallback), Source::kDefault);
    return false;
  }
  auto value = ParseUnsigned(*text, max);
  if (!value.ok()) {
    Record(name, *text, Source::kEnv);
    FailParse(name, *text, "an unsigned integer",
              absl::StrFormat("decimal digits, 0 to %u", max));
    return false;
  }
  *field = *value;
  Record(name, std::to_string(*value), Source::kEnv);
  return true;
}

bool Resolver::ReadByteCount(std::string_view name, uint64_t fallback,
                             uint64_t* field) {
  *field = fallback;
  std::optional<std::string> text = Env(name);
  if (!text) {
    Record(name, std::to_string(fallback), Source::kDefault);
    return false;
  }
  auto value = ParseByteCount(*text);
  if (!value.ok()) {
    Record(name, *text, Source::kEnv);
    FailParse(name, *text, "a byte count",
              "a number of bytes with an optional unit B, K/KB/KiB, "
              "M/MB/MiB, G/GB/GiB, e.g. 4096 or 2MiB");
    return false;
  }
  *field = *value;
  Record(name, std::to_string(*value), Source::kEnv);
  return true;
}

bool Resolver::ReadRangeList(std::string_view name, std::vector<int>* field) {
  std::optional<std::string> text = Env(name);
  if (!text) return false;  // the caller records the range-list default
  auto value = ParseRangeList(*text);
  if (!value.ok()) {
    Record(name, *text, Source::kEnv);
    FailParse(name, *text, "a range list",
              "ids and ranges separated by commas, e.g. 0-3 or 0,2,4");
    return false;
  }
  *field = *value;
  Record(name, FormatRangeList(*value), Source::kEnv);
  return true;
}

bool Resolver::ReadString(std::string_view name, std::string fallback,
                          std::string* field) {
  std::optional<std::string> text = Env(name);
  if (!text) {
    *field = fallback;
    Record(name, std::move(fallback), Source::kDefault);
    return false;
  }
  *field = *text;
  Record(name, *text, Source::kEnv);
  return true;
}

}  // namespace neuron::config
