// Writes a NEFF whose model holds BYTES of weights (one f32 constant), for
// bench/load.sh: HLO text cannot carry a gigabyte of values, so the module
// is built here and packaged with the compiler's own lib/program + lib/neff.
// The output is x + the sum of every weight, so a first execution reads them
// all (a lazily mapped fast-loading NEFF pays for its pages there).
// Usage: make_weights_neff OUT.neff BYTES [--fast-loading]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

#include "absl/strings/str_format.h"
#include "lib/hlo/load.h"
#include "lib/neff/neff.h"
#include "lib/program/dtype.h"
#include "lib/program/package.h"

using namespace neuron;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: make_weights_neff OUT.neff BYTES [--fast-loading]\n");
    return 2;
  }
  const std::string out = argv[1];
  const int64_t elements = std::max<int64_t>(4, std::strtoll(argv[2], nullptr, 10) / 4);
  const bool fast = argc > 3 && std::strcmp(argv[3], "--fast-loading") == 0;
  const std::string text = absl::StrFormat(
      "HloModule weights\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT c = f32[] add(a, b)\n}\nENTRY main {\n  x = f32[4] parameter(0)\n"
      "  w = f32[%d] constant({...})\n  zero = f32[] constant(0)\n"
      "  t = f32[] reduce(w, zero), dimensions={0}, to_apply=add\n"
      "  s = f32[4] broadcast(t), dimensions={}\n  ROOT r = f32[4] add(x, s)\n}\n",
      elements);
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::LoadModule(text, "weights.hlo");
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  hlo::Instruction* w = (*module)->entry()->Find("w");
  hlo::Literal values = hlo::Literal::Zeros(w->shape());
  float* data = reinterpret_cast<float*>(values.mutable_data().data());
  // Pseudo-random values in [-1, 1): real weights barely compress, so the
  // compressed NEFF costs what it would for a real model.
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < elements; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    data[i] = static_cast<float>(static_cast<int64_t>(state >> 40) - (1 << 23)) / (1 << 23);
  }
  w->attrs().literal = std::move(values);

  program::SerializeInput input;
  input.module = module->get();
  input.input_hlo_text = text;
  input.page_align_constants = fast;
  program::Manifest& m = input.manifest;
  m.name = "weights";
  m.fast_loading = fast;
  program::TensorInfo x;
  x.name = "x";
  x.parameter = 0;
  x.type = hlo::ElementType::kF32;
  x.dims = {4};
  x.size = 16;
  m.inputs = {x};
  program::TensorInfo r = x;
  r.name = "output0";
  r.parameter = -1;
  m.outputs = {r};
  m.memory.constants = elements * 4;
  std::deque<std::string> storage;
  absl::StatusOr<std::vector<neff::Member>> members = program::Serialize(input, &storage);
  if (!members.ok()) {
    std::fprintf(stderr, "%s\n", std::string(members.status().message()).c_str());
    return 1;
  }
  neff::WriteOptions options;
  options.name = "weights";
  options.fast_loading = fast;
  if (absl::Status s = neff::WriteFile(out, *members, options); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
