#include "lib/compiler/input_kind.h"

#include "absl/strings/str_format.h"
#include "lib/hlo/load.h"
#include "lib/hlo/proto_reader.h"
#include "lib/neff/header.h"

namespace neuron::compiler {
namespace {

bool StartsWith(std::string_view bytes, std::string_view prefix) {
  return bytes.substr(0, prefix.size()) == prefix;
}

// Formats recognised by their first bytes, and how to say what they are.
struct Magic {
  std::string_view prefix;
  const char* what;
};

constexpr Magic kMagics[] = {
    {std::string_view("\x93NUMPY", 6), "a NumPy array (.npy)"},
    {std::string_view("PK\x03\x04", 4), "a zip archive (.npz, .zip, a PyTorch checkpoint)"},
    {std::string_view("\x1f\x8b", 2), "gzip-compressed data"},
    {std::string_view("\x28\xb5\x2f\xfd", 4), "zstd-compressed data (a core dump? see neuron-dump show)"},
    {std::string_view("\xfd" "7zXZ\x00", 6), "xz-compressed data"},
    {std::string_view("BZh", 3), "bzip2-compressed data"},
    {std::string_view("\x7f" "ELF", 4), "an ELF executable or library"},
    {std::string_view("\x89PNG", 4), "a PNG image"},
    {std::string_view("%PDF", 4), "a PDF document"},
    {std::string_view("\x80\x02", 2), "a Python pickle"},
    {std::string_view("\x80\x03", 2), "a Python pickle"},
    {std::string_view("\x80\x04", 2), "a Python pickle"},
    {std::string_view("\x80\x05", 2), "a Python pickle"},
};

bool IsTextByte(unsigned char c) {
  return c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c != 0x7f);
}

// The first non-blank character, or '\0'.
char FirstNonBlank(std::string_view bytes) {
  for (char c : bytes) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return c;
  }
  return '\0';
}

}  // namespace

ClassifiedInput ClassifyInput(std::string_view bytes) {
  if (bytes.empty()) return {InputKind::kOther, "an empty file"};
  if (neff::LooksLikeNeff(bytes)) return {InputKind::kNeff, ""};
  if (hlo::LooksLikeText(bytes)) return {InputKind::kHloText, ""};
  for (const Magic& m : kMagics) {
    if (StartsWith(bytes, m.prefix)) return {InputKind::kOther, m.what};
  }
  if (bytes.size() > 262 && bytes.substr(257, 5) == "ustar") return {InputKind::kOther, "a tar archive"};
  if (hlo::LooksLikeProto(bytes)) return {InputKind::kHloProto, ""};
  // Text is judged on its head: a long file need not be read through.
  const std::string_view head = bytes.substr(0, 4096);
  bool text = true;
  for (char c : head) text = text && IsTextByte(static_cast<unsigned char>(c));
  if (text) {
    const char first = FirstNonBlank(head);
    if (first == '{' || first == '[') return {InputKind::kOther, "JSON"};
    if (StartsWith(head, "#!")) return {InputKind::kOther, "a script"};
    return {InputKind::kOther, "text that is not HLO (HLO text starts with 'HloModule')"};
  }
  return {InputKind::kOther, absl::StrFormat("%d bytes of unrecognized binary data", bytes.size())};
}

}  // namespace neuron::compiler
