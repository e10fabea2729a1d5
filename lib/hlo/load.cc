#include "lib/hlo/load.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <random>

#include "absl/strings/str_format.h"
#include "lib/hlo/proto_reader.h"
#include "lib/hlo/text_parser.h"

namespace neuron::hlo {

bool LooksLikeText(std::string_view bytes) {
  size_t p = 0;
  while (p < bytes.size()) {
    char c = bytes[p];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++p;
    } else if (bytes.substr(p, 2) == "//") {
      size_t nl = bytes.find('\n', p);
      p = nl == std::string_view::npos ? bytes.size() : nl + 1;
    } else if (bytes.substr(p, 2) == "/*") {
      size_t close = bytes.find("*/", p + 2);
      p = close == std::string_view::npos ? bytes.size() : close + 2;
    } else {
      break;
    }
  }
  return bytes.substr(p, 9) == "HloModule";
}

absl::StatusOr<std::unique_ptr<Module>> LoadModule(std::string_view bytes,
                                                   std::string_view display_name) {
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: empty input", display_name));
  }
  if (LooksLikeText(bytes)) return ParseText(bytes, display_name);
  return ParseProto(bytes, display_name);
}

absl::StatusOr<std::unique_ptr<Module>> LoadModuleFromFile(const std::string& path) {
  std::string bytes;
  if (path == "-") {
    bytes.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) return absl::InternalError("<stdin>: read failed");
    return LoadModule(bytes, "<stdin>");
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    return absl::NotFoundError(absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
  bool failed = std::ferror(f);
  int err = errno;
  std::fclose(f);
  if (failed) {
    return absl::InternalError(absl::StrFormat("%s: read failed: %s", path, std::strerror(err)));
  }
  return LoadModule(bytes, path);
}

std::vector<Instruction*> ElidedConstants(const Module& module) {
  std::vector<Instruction*> out;
  for (Computation* c : module.computations()) {
    for (Instruction* inst : c->instructions()) {
      const auto& lit = inst->attrs().literal;
      if (inst->opcode() == Opcode::kConstant && lit && lit->elided()) out.push_back(inst);
    }
  }
  return out;
}

absl::Status CheckNoElidedConstants(const Module& module) {
  std::vector<Instruction*> elided = ElidedConstants(module);
  if (elided.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: constant %s has its value elided as {...} (%d such constants); the values are not "
      "in the file, so ask for a fill (zeros or random) to compile it anyway",
      module.name(), elided[0]->Describe(), elided.size()));
}

void FillElidedConstants(Module& module, ElidedFill fill, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (Instruction* inst : ElidedConstants(module)) {
    Shape shape = inst->shape();
    shape.layout.reset();
    Literal lit = Literal::Zeros(shape);
    if (fill == ElidedFill::kRandom && shape.IsArray()) {
      for (int64_t i = 0; i < lit.element_count(); ++i) {
        if (IsFloatingPoint(shape.type) || IsComplex(shape.type)) {
          lit.SetDouble(i, real(rng));
        } else if (shape.type == ElementType::kPred) {
          lit.SetInt(i, static_cast<int64_t>(rng() & 1));
        } else {
          lit.SetInt(i, static_cast<int64_t>(rng() % 10));
        }
      }
    }
    inst->attrs().literal = std::move(lit);
  }
}

}  // namespace neuron::hlo
