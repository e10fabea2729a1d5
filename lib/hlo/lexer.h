// Character-level lexer for HLO text. The parser pulls tokens on demand
// (names, numbers, strings, punctuation) because what a token means depends
// on where it is; attribute values are captured as balanced raw text and
// handed to small value parsers, which use the same lexer over that range so
// every error still points at the right line and column.
#ifndef NEURON_LIB_HLO_LEXER_H_
#define NEURON_LIB_HLO_LEXER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace neuron::hlo {

// Maps byte offsets of a source text to 1-based line and column.
class SourceMap {
 public:
  SourceMap(std::string_view display_name, std::string_view text);
  int Line(size_t offset) const;
  int Column(size_t offset) const;
  // "name:line:col: message" as an InvalidArgument status.
  absl::Status Error(size_t offset, std::string_view message) const;
  std::string_view text() const { return text_; }

 private:
  std::string display_name_;
  std::string_view text_;
  std::vector<size_t> line_starts_;
};

class Lexer {
 public:
  // Lexes text[begin, end) of the source.
  Lexer(const SourceMap* source, size_t begin, size_t end);
  explicit Lexer(const SourceMap* source)
      : Lexer(source, 0, source->text().size()) {}

  // Skips spaces, newlines and comments (/* ... */ and // to end of line).
  void SkipTrivia();
  // Skips trivia but stops at a newline; returns true if one was seen.
  bool SkipTriviaOnLine();
  bool AtEnd();
  // Next significant character (after trivia), or '\0' at the end.
  char Peek();
  // The character right at the cursor, trivia not skipped.
  char PeekRaw() const { return pos_ < end_ ? text_[pos_] : '\0'; }
  // Consumes `c` if it comes next (after trivia).
  bool TryConsume(char c);
  // Consumes `word` if it comes next as a whole name.
  bool TryConsumeWord(std::string_view word);
  absl::Status Expect(char c, std::string_view what);
  absl::Status ExpectArrow();

  // A name: letters, digits, '_', '.', '-', '$', with an optional leading
  // '%' which is dropped. Error when none is there.
  absl::Status ReadName(std::string* name, std::string_view what);
  // Like ReadName but also accepts the '-inf'/'-nan' spellings and numbers:
  // a run of characters that can form a literal element.
  absl::Status ReadNumberText(std::string_view* text, std::string_view what);
  absl::Status ReadInt(int64_t* value, std::string_view what);
  // A double-quoted string with C escapes; returns the unescaped text.
  absl::Status ReadString(std::string* value, std::string_view what);

  // Raw text of an attribute value: a quoted string, or a run balanced in
  // (), [], {} ending before a ',' / ')' / '}' / whitespace at depth 0.
  // With spaces_inside, spaces followed by more value text on the same
  // line do not end it ("s32[] 1", "mesh[...] {...}").
  absl::Status CaptureValue(size_t* begin, size_t* end, bool spaces_inside = false);
  // With the cursor on an opening bracket: the text strictly inside the
  // matching closing bracket; the cursor ends after it.
  absl::Status CaptureBalanced(char open, char close, size_t* begin, size_t* end);

  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  size_t end() const { return end_; }
  const SourceMap* source() const { return source_; }
  std::string_view Slice(size_t begin, size_t end) const {
    return text_.substr(begin, end - begin);
  }
  // An error at the cursor (after trivia).
  absl::Status ErrorHere(std::string_view message);
  absl::Status ErrorAt(size_t offset, std::string_view message) const {
    return source_->Error(offset, message);
  }

 private:
  const SourceMap* source_;
  std::string_view text_;
  size_t pos_;
  size_t end_;
};

bool IsNameChar(char c);

}  // namespace neuron::hlo

#endif  // NEURON_LIB_HLO_LEXER_H_
