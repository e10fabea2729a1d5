#include "lib/tensorfile/key_path.h"

#include "absl/strings/str_cat.h"

namespace neuron::tensorfile {
namespace {

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::optional<KeyPath> ParseKeyPath(std::string_view text) {
  KeyPath keys;
  std::string bare;
  auto flush = [&] {
    if (!bare.empty()) keys.push_back(std::move(bare));
    bare.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '/' || c == '.') {
      flush();
      ++i;
    } else if (c == '[') {
      flush();
      ++i;
      // HLO text may escape the quotes of a subscript ([\'w\']).
      if (i < text.size() && text[i] == '\\') ++i;
      if (i < text.size() && (text[i] == '\'' || text[i] == '"')) {
        const char quote = text[i++];
        std::string key;
        while (i < text.size() && text[i] != quote) {
          if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == quote) {
            // An escaped closing quote ends the key: \']
            if (i + 2 < text.size() && text[i + 2] == ']') break;
            ++i;
          }
          key.push_back(text[i++]);
        }
        if (i < text.size() && text[i] == '\\') ++i;
        if (i >= text.size() || text[i] != quote) return std::nullopt;
        ++i;
        if (i >= text.size() || text[i] != ']') return std::nullopt;
        ++i;
        keys.push_back(std::move(key));
      } else {
        const size_t end = text.find(']', i);
        if (end == std::string_view::npos) return std::nullopt;
        std::string_view index = text.substr(i, end - i);
        if (!IsDigits(index)) return std::nullopt;
        keys.emplace_back(index);
        i = end + 1;
      }
    } else if (c == '(' || c == ')' || c == ' ' || c == ']' || c == '\'' || c == '"') {
      return std::nullopt;
    } else {
      bare.push_back(c);
      ++i;
    }
  }
  flush();
  if (keys.empty()) return std::nullopt;
  return keys;
}

bool IsSuffix(const KeyPath& keys, const KeyPath& path) {
  if (keys.empty() || keys.size() > path.size()) return false;
  const size_t skip = path.size() - keys.size();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] != path[skip + i]) return false;
  }
  return true;
}

std::string FormatKeyPath(const KeyPath& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i == 0) out = path[0];
    else if (IsDigits(path[i])) absl::StrAppend(&out, "[", path[i], "]");
    else absl::StrAppend(&out, "['", path[i], "']");
  }
  return out;
}

}  // namespace neuron::tensorfile
