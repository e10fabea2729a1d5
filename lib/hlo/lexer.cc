#include "lib/hlo/lexer.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "absl/strings/str_format.h"

namespace neuron::hlo {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-' || c == '$';
}

SourceMap::SourceMap(std::string_view display_name, std::string_view text)
    : display_name_(display_name), text_(text) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
}

int SourceMap::Line(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return static_cast<int>(it - line_starts_.begin());
}

int SourceMap::Column(size_t offset) const {
  return static_cast<int>(offset - line_starts_[Line(offset) - 1]) + 1;
}

absl::Status SourceMap::Error(size_t offset, std::string_view message) const {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s:%d:%d: %s", display_name_, Line(offset), Column(offset), message));
}

Lexer::Lexer(const SourceMap* source, size_t begin, size_t end)
    : source_(source), text_(source->text()), pos_(begin), end_(end) {}

void Lexer::SkipTrivia() {
  while (pos_ < end_) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < end_ && text_[pos_ + 1] == '*') {
      size_t close = text_.find("*/", pos_ + 2);
      pos_ = (close == std::string_view::npos || close + 2 > end_) ? end_ : close + 2;
    } else if (c == '/' && pos_ + 1 < end_ && text_[pos_ + 1] == '/') {
      while (pos_ < end_ && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

bool Lexer::SkipTriviaOnLine() {
  while (pos_ < end_) {
    char c = text_[pos_];
    if (c == '\n') return true;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < end_ && text_[pos_ + 1] == '*') {
      size_t close = text_.find("*/", pos_ + 2);
      pos_ = (close == std::string_view::npos || close + 2 > end_) ? end_ : close + 2;
    } else {
      return false;
    }
  }
  return false;
}

bool Lexer::AtEnd() {
  SkipTrivia();
  return pos_ >= end_;
}

char Lexer::Peek() {
  SkipTrivia();
  return pos_ < end_ ? text_[pos_] : '\0';
}

bool Lexer::TryConsume(char c) {
  if (Peek() == c && pos_ < end_) {
    ++pos_;
    return true;
  }
  return false;
}

bool Lexer::TryConsumeWord(std::string_view word) {
  SkipTrivia();
  size_t p = pos_;
  if (p < end_ && text_[p] == '%') ++p;
  if (text_.substr(p, word.size()) != word || p + word.size() > end_) return false;
  size_t after = p + word.size();
  if (after < end_ && IsNameChar(text_[after])) return false;
  pos_ = after;
  return true;
}

absl::Status Lexer::ErrorHere(std::string_view message) {
  SkipTrivia();
  return source_->Error(std::min(pos_, end_), message);
}

absl::Status Lexer::Expect(char c, std::string_view what) {
  if (TryConsume(c)) return absl::OkStatus();
  char found = Peek();
  if (found == '\0') {
    return ErrorHere(absl::StrFormat("expected '%c' %s, found end of input", c, what));
  }
  return ErrorHere(absl::StrFormat("expected '%c' %s, found '%c'", c, what, found));
}

absl::Status Lexer::ExpectArrow() {
  SkipTrivia();
  if (pos_ + 1 < end_ && text_[pos_] == '-' && text_[pos_ + 1] == '>') {
    pos_ += 2;
    return absl::OkStatus();
  }
  return ErrorHere("expected '->'");
}

absl::Status Lexer::ReadName(std::string* name, std::string_view what) {
  SkipTrivia();
  size_t p = pos_;
  if (p < end_ && text_[p] == '%') ++p;
  size_t start = p;
  // A leading '-' would be a number or an arrow, never a name.
  if (p < end_ && text_[p] != '-') {
    while (p < end_ && IsNameChar(text_[p])) {
      // Stop before an arrow ("b01f->...") so it is not eaten as a name.
      if (text_[p] == '-' && p + 1 < end_ && text_[p + 1] == '>') break;
      ++p;
    }
  }
  if (p == start) {
    return ErrorHere(absl::StrFormat("expected %s", what));
  }
  name->assign(text_.substr(start, p - start));
  pos_ = p;
  return absl::OkStatus();
}

absl::Status Lexer::ReadNumberText(std::string_view* text, std::string_view what) {
  SkipTrivia();
  size_t p = pos_;
  if (p < end_ && (text_[p] == '-' || text_[p] == '+')) ++p;
  size_t body = p;
  while (p < end_) {
    char c = text_[p];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_') {
      ++p;
    } else if ((c == '-' || c == '+') && p > body &&
               (text_[p - 1] == 'e' || text_[p - 1] == 'E')) {
      ++p;  // exponent sign
    } else {
      break;
    }
  }
  if (p == body) return ErrorHere(absl::StrFormat("expected %s", what));
  *text = text_.substr(pos_, p - pos_);
  pos_ = p;
  return absl::OkStatus();
}

absl::Status Lexer::ReadInt(int64_t* value, std::string_view what) {
  size_t start = (SkipTrivia(), pos_);
  std::string_view text;
  if (absl::Status s = ReadNumberText(&text, what); !s.ok()) return s;
  std::string_view digits = text;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    return ErrorAt(start, absl::StrFormat("expected %s, found '%s'", what, text));
  }
  return absl::OkStatus();
}

absl::Status Lexer::ReadString(std::string* value, std::string_view what) {
  SkipTrivia();
  if (pos_ >= end_ || text_[pos_] != '"') {
    return ErrorHere(absl::StrFormat("expected a quoted string for %s", what));
  }
  size_t start = pos_++;
  value->clear();
  while (pos_ < end_ && text_[pos_] != '"') {
    char c = text_[pos_++];
    if (c == '\\' && pos_ < end_) {
      char e = text_[pos_++];
      switch (e) {
        case 'n': value->push_back('\n'); break;
        case 't': value->push_back('\t'); break;
        case 'r': value->push_back('\r'); break;
        default: value->push_back(e); break;
      }
    } else {
      value->push_back(c);
    }
  }
  if (pos_ >= end_) return ErrorAt(start, "unterminated string");
  ++pos_;
  return absl::OkStatus();
}

namespace {

// Skips a quoted string starting at text[p] == '"'; returns the offset after
// it, or npos when unterminated before end.
size_t SkipString(std::string_view text, size_t p, size_t end) {
  for (++p; p < end; ++p) {
    if (text[p] == '\\') {
      ++p;
    } else if (text[p] == '"') {
      return p + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

absl::Status Lexer::CaptureValue(size_t* begin, size_t* end, bool spaces_inside) {
  SkipTrivia();
  size_t start = pos_;
  size_t p = pos_;
  if (p < end_ && text_[p] == '"') {
    size_t after = SkipString(text_, p, end_);
    if (after == std::string_view::npos) return ErrorAt(start, "unterminated string");
    *begin = start;
    *end = pos_ = after;
    return absl::OkStatus();
  }
  std::vector<char> closers;
  while (p < end_) {
    char c = text_[p];
    if (c == '"') {
      size_t after = SkipString(text_, p, end_);
      if (after == std::string_view::npos) return ErrorAt(p, "unterminated string");
      p = after;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      closers.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (closers.empty()) break;
      if (closers.back() != c) {
        return ErrorAt(p, absl::StrFormat("unbalanced '%c' in attribute value", c));
      }
      closers.pop_back();
    } else if (closers.empty() && (c == ' ' || c == '\t')) {
      if (!spaces_inside) break;
      // Values may hold spaces ("mesh[...] {...}", "literal=s32[] 1"): the
      // value ends at the first ',' or line end at depth 0.
      size_t q = p;
      while (q < end_ && (text_[q] == ' ' || text_[q] == '\t')) ++q;
      if (q >= end_ || p == start) break;
      char n = text_[q];
      // Only a brace or a number continues: wrapped text may put the next
      // instruction's name right after a value on the same line.
      if (n != '{' && n != '-' && !std::isdigit(static_cast<unsigned char>(n))) break;
      p = q;
      continue;
    } else if (closers.empty() && (c == ',' || c == '\n' || c == '\r')) {
      break;
    }
    ++p;
  }
  if (!closers.empty()) {
    return ErrorAt(start, absl::StrFormat("attribute value is missing a closing '%c'",
                                          closers.back()));
  }
  if (p == start) return ErrorAt(start, "expected an attribute value");
  *begin = start;
  *end = pos_ = p;
  return absl::OkStatus();
}

absl::Status Lexer::CaptureBalanced(char open, char close, size_t* begin, size_t* end) {
  if (absl::Status s = Expect(open, ""); !s.ok()) return s;
  size_t start = pos_;
  int depth = 1;
  size_t p = pos_;
  while (p < end_) {
    char c = text_[p];
    if (c == '"') {
      size_t after = SkipString(text_, p, end_);
      if (after == std::string_view::npos) return ErrorAt(p, "unterminated string");
      p = after;
      continue;
    }
    if (c == '/' && p + 1 < end_ && text_[p + 1] == '*') {
      size_t close_comment = text_.find("*/", p + 2);
      if (close_comment == std::string_view::npos || close_comment + 2 > end_) break;
      p = close_comment + 2;
      continue;
    }
    if (c == open) {
      ++depth;
    } else if (c == close && --depth == 0) {
      *begin = start;
      *end = p;
      pos_ = p + 1;
      return absl::OkStatus();
    }
    ++p;
  }
  return ErrorAt(start - 1, absl::StrFormat("'%c' is never closed", open));
}

}  // namespace neuron::hlo
