// neuron-exec --random-inputs' generator (tools/neuron-exec/random_tensors) alone:
// the best of ROUNDS times to draw one tensor of BYTES bytes of each element
// type (bench/random_inputs.sh). Prints "TYPE SECONDS" a line, then
// "zeros SECONDS": Literal::Zeros of BYTES alone, the floor every draw pays
// (the page faults of a fresh buffer).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lib/hlo/literal.h"
#include "tools/neuron-exec/random_tensors.h"

namespace {

using neuron::hlo::ElementType;

double BestSeconds(ElementType type, int64_t bytes, int rounds) {
  const int64_t n = bytes / neuron::hlo::StorageBytes(type);
  const neuron::hlo::Shape shape = neuron::hlo::Shape::Array(type, {n});
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    neuron::hlo::Literal value = neuron::exec_tool::RandomTensors(r).Next(shape);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s);
    if (value.data().empty()) std::abort();  // keeps the draw
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: random_inputs BYTES ROUNDS\n");
    return 2;
  }
  const int64_t bytes = std::atoll(argv[1]);
  const int rounds = std::atoi(argv[2]);
  if (bytes <= 0 || rounds <= 0) {
    std::fprintf(stderr, "random_inputs: BYTES and ROUNDS must be positive\n");
    return 2;
  }
  for (ElementType type :
       {ElementType::kF32, ElementType::kF64, ElementType::kBF16, ElementType::kF16,
        ElementType::kF8E4M3FN, ElementType::kF8E5M2, ElementType::kS32}) {
    std::printf("%s %.6f\n", std::string(neuron::hlo::ElementTypeName(type)).c_str(),
                BestSeconds(type, bytes, rounds));
    std::fflush(stdout);
  }
  double zeros = 1e30;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    neuron::hlo::Literal value =
        neuron::hlo::Literal::Zeros(neuron::hlo::Shape::Array(ElementType::kU8, {bytes}));
    zeros = std::min(
        zeros, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (value.data().empty()) std::abort();
  }
  std::printf("zeros %.6f\n", zeros);
  return 0;
}
