// The compiler's stable error codes (NCC-Ennnn), each with a title, the
// cause and the fix. docs/error-codes.md is generated from this table
// (RenderErrorCodesMarkdown) and a test keeps the two in step.
#ifndef NEURON_LIB_COMPILER_ERROR_CODES_H_
#define NEURON_LIB_COMPILER_ERROR_CODES_H_

#include <span>
#include <string>
#include <string_view>

namespace neuron::compiler {

struct ErrorCode {
  const char* code;   // "NCC-E0201"
  const char* title;  // short name
  const char* cause;
  const char* fix;
};

// Codes, by name, for use in the compiler.
inline constexpr char kErrInputUnreadable[] = "NCC-E0001";
inline constexpr char kErrInputInvalid[] = "NCC-E0002";
inline constexpr char kErrVerifyFailed[] = "NCC-E0003";
inline constexpr char kErrElidedConstant[] = "NCC-E0004";
inline constexpr char kErrFillTooLarge[] = "NCC-E0005";
inline constexpr char kErrBadOption[] = "NCC-E0101";
inline constexpr char kErrOptionConflict[] = "NCC-E0102";
inline constexpr char kErrUnsupportedOperator[] = "NCC-E0201";
inline constexpr char kErrUnsupportedCustomCall[] = "NCC-E0202";
inline constexpr char kErrDynamicShape[] = "NCC-E0203";
inline constexpr char kErrComplexType[] = "NCC-E0204";
inline constexpr char kErrBadCustomCall[] = "NCC-E0205";
inline constexpr char kErrUnsupportedKernel[] = "NCC-E0206";
inline constexpr char kErrOutputUnwritable[] = "NCC-E0301";
inline constexpr char kErrCachedFailure[] = "NCC-E0302";
inline constexpr char kErrInternal[] = "NCC-E9000";

std::span<const ErrorCode> AllErrorCodes();
// nullptr for an unknown code.
const ErrorCode* FindErrorCode(std::string_view code);

// docs/error-codes.md, from the table.
std::string RenderErrorCodesMarkdown();

}  // namespace neuron::compiler

#endif  // NEURON_LIB_COMPILER_ERROR_CODES_H_
