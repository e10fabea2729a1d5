#include "lib/compiler/passes/mlir_attribute_dict.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/support/parse.h"

namespace neuron::compiler {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// `text` split at the commas outside quotes, brackets and braces.
std::vector<std::string_view> SplitTopLevel(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (quoted) {
      if (ch == '\\') ++i;
      else if (ch == '"') quoted = false;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == '[' || ch == '{' || ch == '(' || ch == '<') {
      ++depth;
    } else if (ch == ']' || ch == '}' || ch == ')' || ch == '>') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

absl::StatusOr<MlirAttributeDict> MlirAttributeDict::Parse(std::string_view text) {
  std::string_view body = Trim(text);
  if (body.size() < 2 || body.front() != '{' || body.back() != '}') {
    return absl::InvalidArgumentError(absl::StrFormat("backend_config '%s' is not an attribute dictionary {...}", text));
  }
  body = Trim(body.substr(1, body.size() - 2));
  MlirAttributeDict dict;
  if (body.empty()) return dict;
  for (std::string_view entry : SplitTopLevel(body)) {
    size_t eq = entry.find('=');
    std::string_view name = Trim(entry.substr(0, eq));
    if (eq == std::string_view::npos || name.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat("backend_config entry '%s' is not 'name = value'",
                                                        Trim(entry)));
    }
    std::string_view value = entry.substr(eq + 1);
    // A trailing `: type` (i64, f64...) is not needed: each look-up names its kind.
    if (size_t colon = value.rfind(':'); colon != std::string_view::npos && value.find('"') == std::string_view::npos) {
      value = value.substr(0, colon);
    }
    dict.values_[std::string(name)] = std::string(Trim(value));
  }
  return dict;
}

absl::StatusOr<std::string_view> MlirAttributeDict::Value(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return absl::NotFoundError(absl::StrFormat("backend_config has no '%s'", name));
  return std::string_view(it->second);
}

absl::StatusOr<int64_t> MlirAttributeDict::Int(std::string_view name) const {
  absl::StatusOr<std::string_view> v = Value(name);
  if (!v.ok()) return v.status();
  absl::StatusOr<int64_t> i = ParseSigned(*v);
  if (!i.ok()) return absl::InvalidArgumentError(absl::StrFormat("backend_config '%s = %s' is not an integer", name, *v));
  return *i;
}

absl::StatusOr<double> MlirAttributeDict::Float(std::string_view name) const {
  absl::StatusOr<std::string_view> v = Value(name);
  if (!v.ok()) return v.status();
  std::string s(*v);
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) {
    return absl::InvalidArgumentError(absl::StrFormat("backend_config '%s = %s' is not a number", name, s));
  }
  return d;
}

absl::StatusOr<bool> MlirAttributeDict::Bool(std::string_view name) const {
  absl::StatusOr<std::string_view> v = Value(name);
  if (!v.ok()) return v.status();
  if (*v == "true") return true;
  if (*v == "false") return false;
  return absl::InvalidArgumentError(absl::StrFormat("backend_config '%s = %s' is not true or false", name, *v));
}

absl::StatusOr<int64_t> MlirAttributeDict::IntOr(std::string_view name, int64_t fallback) const {
  return Has(name) ? Int(name) : absl::StatusOr<int64_t>(fallback);
}
absl::StatusOr<double> MlirAttributeDict::FloatOr(std::string_view name, double fallback) const {
  return Has(name) ? Float(name) : absl::StatusOr<double>(fallback);
}
absl::StatusOr<bool> MlirAttributeDict::BoolOr(std::string_view name, bool fallback) const {
  return Has(name) ? Bool(name) : absl::StatusOr<bool>(fallback);
}

}  // namespace neuron::compiler
