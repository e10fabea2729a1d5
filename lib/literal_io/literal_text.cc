#include "lib/literal_io/literal_text.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/parse.h"

namespace neuron::literal_io {
namespace {

struct TypePart {
  hlo::Shape shape;
  std::string_view values;  // after '='
};

// Splits "2x3xf32=..." into the shape and the value text.
absl::StatusOr<TypePart> SplitType(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' is not a tensor: expected DIMSxDTYPE=VALUES, e.g. 2x3xf32=1,2,3,4,5,6",
                        std::string(text)));
  }
  std::string_view type_text = text.substr(0, eq);
  std::vector<int64_t> dims;
  for (;;) {
    size_t x = type_text.find('x');
    // A dimension is all digits before an 'x'; the dtype has no 'x'.
    if (x == std::string_view::npos || x == 0 ||
        !std::isdigit(static_cast<unsigned char>(type_text[0]))) {
      break;
    }
    std::string_view dim = type_text.substr(0, x);
    absl::StatusOr<uint64_t> n = ParseUnsigned(dim, uint64_t{1} << 40);
    if (!n.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s': dimension '%s' is not a number", std::string(text), std::string(dim)));
    }
    dims.push_back(static_cast<int64_t>(*n));
    type_text.remove_prefix(x + 1);
  }
  std::optional<hlo::ElementType> type = hlo::ElementTypeFromName(type_text);
  if (!type.has_value() || !hlo::IsArrayType(*type)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': unknown element type '%s' (f32, bf16, f16, f64, s8..s64, u8..u64, pred)",
        std::string(text), std::string(type_text)));
  }
  TypePart part;
  part.shape = hlo::Shape::Array(*type, dims);
  part.values = text.substr(eq + 1);
  if (!part.shape.ElementCount().has_value()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s': the tensor is too large", std::string(text)));
  }
  return part;
}

bool IsSeparator(char c) { return c == ',' || c == ' ' || c == '[' || c == ']' || c == '\t'; }

}  // namespace

bool LooksLikeInlineTensor(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) return false;
  std::string_view type_text = text.substr(0, eq);
  size_t x = type_text.rfind('x');
  std::string_view dtype = x == std::string_view::npos ? type_text : type_text.substr(x + 1);
  if (x != std::string_view::npos) {
    for (char c : type_text.substr(0, x)) {
      if (!std::isdigit(static_cast<unsigned char>(c)) && c != 'x') return false;
    }
  }
  return hlo::ElementTypeFromName(dtype).has_value();
}

absl::StatusOr<hlo::Literal> ParseInlineTensor(std::string_view text) {
  absl::StatusOr<TypePart> part = SplitType(text);
  if (!part.ok()) return part.status();
  hlo::Literal value = hlo::Literal::Zeros(part->shape);
  const int64_t count = *part->shape.ElementCount();
  std::vector<std::string> tokens;
  std::string_view rest = part->values;
  size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && IsSeparator(rest[i])) ++i;
    size_t start = i;
    while (i < rest.size() && !IsSeparator(rest[i])) ++i;
    if (i > start) tokens.emplace_back(rest.substr(start, i - start));
  }
  if (tokens.size() != 1 && static_cast<int64_t>(tokens.size()) != count) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': %d values for %s, which has %d elements", std::string(text), tokens.size(),
        FormatTensorType(part->shape), count));
  }
  const bool is_float = hlo::IsFloatingPoint(part->shape.type);
  for (int64_t e = 0; e < count; ++e) {
    const std::string& tok = tokens.size() == 1 ? tokens[0] : tokens[e];
    if (part->shape.type == hlo::ElementType::kPred && (tok == "true" || tok == "false")) {
      value.SetInt(e, tok == "true");
      continue;
    }
    char* end = nullptr;
    if (is_float || hlo::IsComplex(part->shape.type)) {
      double d = std::strtod(tok.c_str(), &end);
      if (end == tok.c_str() || *end != '\0') {
        return absl::InvalidArgumentError(absl::StrFormat(
            "'%s': value '%s' is not a number", std::string(text), tok));
      }
      value.SetDouble(e, d);
    } else {
      errno = 0;
      long long v = std::strtoll(tok.c_str(), &end, 0);
      if (end == tok.c_str() || *end != '\0' || errno == ERANGE) {
        // Unsigned 64-bit values above INT64_MAX.
        errno = 0;
        unsigned long long u = std::strtoull(tok.c_str(), &end, 0);
        if (end == tok.c_str() || *end != '\0' || errno == ERANGE || tok[0] == '-') {
          return absl::InvalidArgumentError(absl::StrFormat(
              "'%s': value '%s' is not an integer", std::string(text), tok));
        }
        v = static_cast<long long>(u);
      }
      value.SetInt(e, v);
    }
  }
  return value;
}

std::string FormatTensorType(const hlo::Shape& shape) {
  std::string out;
  for (int64_t d : shape.dims) absl::StrAppend(&out, d, "x");
  out += hlo::ElementTypeName(shape.type);
  return out;
}

namespace {

std::string FormatElement(const hlo::Literal& value, int64_t i) {
  hlo::ElementType t = value.shape().type;
  if (t == hlo::ElementType::kPred) return value.GetInt(i) ? "1" : "0";
  if (hlo::IsInteger(t)) {
    if (hlo::IsUnsignedInt(t)) return absl::StrCat(static_cast<uint64_t>(value.GetInt(i)));
    return absl::StrCat(value.GetInt(i));
  }
  auto fmt = [](double d) {
    if (std::isnan(d)) return std::string("nan");
    if (std::isinf(d)) return std::string(d > 0 ? "inf" : "-inf");
    return absl::StrFormat("%.6g", d);
  };
  if (hlo::IsComplex(t)) return absl::StrCat(fmt(value.GetDouble(i)), "+", fmt(value.GetImag(i)), "i");
  return fmt(value.GetDouble(i));
}

}  // namespace

std::string FormatTensor(const hlo::Literal& value, const PrintLimits& limits) {
  const hlo::Shape& shape = value.shape();
  std::string out = FormatTensorType(shape) + "=";
  const int64_t count = value.element_count();
  if (shape.dims.empty()) {
    if (count > 0) out += FormatElement(value, 0);
    return out;
  }
  // Brackets around every innermost row, as IREE prints: [a b][c d].
  const int64_t row = shape.dims.back() == 0 ? 1 : shape.dims.back();
  const int64_t shown = std::min(count, limits.max_elements);
  for (int64_t i = 0; i < shown; ++i) {
    if (i % row == 0) out += "[";
    out += FormatElement(value, i);
    if (i % row == row - 1) {
      out += "]";
    } else if (i + 1 < shown) {
      out += " ";
    }
  }
  if (shown < count) absl::StrAppend(&out, "...(", count - shown, " more)");
  return out;
}

}  // namespace neuron::literal_io
