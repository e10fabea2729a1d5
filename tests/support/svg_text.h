// What an SVG picture says, for tests: PLplot writes every character of a
// <text> element as a character reference (&#x70;&#x35;&#x30; for "p50"),
// so words are looked for in the decoded text, one element per line.
#ifndef NEURON_TESTS_SUPPORT_SVG_TEXT_H_
#define NEURON_TESTS_SUPPORT_SVG_TEXT_H_

#include <cstdlib>
#include <string>
#include <string_view>

namespace neuron::testing {

inline void AppendUtf8(unsigned long c, std::string* out) {
  if (c < 0x80) {
    *out += static_cast<char>(c);
  } else if (c < 0x800) {
    *out += static_cast<char>(0xC0 | (c >> 6));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    *out += static_cast<char>(0xE0 | (c >> 12));
    *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (c >> 18));
    *out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// The decoded contents of every <text> element, tags inside removed.
inline std::string SvgVisibleText(std::string_view svg) {
  std::string out;
  size_t at = 0;
  while ((at = svg.find("<text", at)) != std::string_view::npos) {
    const size_t open_end = svg.find('>', at);
    const size_t close = svg.find("</text>", at);
    if (open_end == std::string_view::npos || close == std::string_view::npos) break;
    bool in_tag = false;
    for (size_t i = open_end + 1; i < close; ++i) {
      const char c = svg[i];
      if (c == '<') in_tag = true;
      if (in_tag) {
        if (c == '>') in_tag = false;
        continue;
      }
      if (c == '&') {
        const size_t semi = svg.find(';', i);
        if (semi == std::string_view::npos || semi > close) break;
        const std::string entity(svg.substr(i + 1, semi - i - 1));
        if (entity.size() > 2 && entity[0] == '#' && (entity[1] == 'x' || entity[1] == 'X')) {
          AppendUtf8(std::strtoul(entity.c_str() + 2, nullptr, 16), &out);
        } else if (entity.size() > 1 && entity[0] == '#') {
          AppendUtf8(std::strtoul(entity.c_str() + 1, nullptr, 10), &out);
        } else if (entity == "amp") {
          out += '&';
        } else if (entity == "lt") {
          out += '<';
        } else if (entity == "gt") {
          out += '>';
        }
        i = semi;
        continue;
      }
      out += c;
    }
    out += '\n';
    at = close + 7;
  }
  return out;
}

// A whole SVG document: an <svg ...> root that is closed at the end.
inline bool IsWholeSvg(std::string_view svg) {
  const size_t root = svg.find("<svg");
  if (root == std::string_view::npos) return false;
  const size_t end = svg.rfind("</svg>");
  if (end == std::string_view::npos || end < root) return false;
  for (size_t i = end + 6; i < svg.size(); ++i) {
    if (svg[i] != '\n' && svg[i] != ' ' && svg[i] != '\r' && svg[i] != '\t') return false;
  }
  return true;
}

}  // namespace neuron::testing

#endif  // NEURON_TESTS_SUPPORT_SVG_TEXT_H_
