// neuron-exec --random-inputs: tensors drawn like the oracle draws them
// (floats uniform in [-1, 1] rounded to the type, integers in [0, 10), pred
// 0 or 1), from a seed, parameter by parameter, so a run is reproducible.
#ifndef NEURON_LIB_RUNTIME_CLI_RANDOM_H_
#define NEURON_LIB_RUNTIME_CLI_RANDOM_H_

#include <cstdint>
#include <random>

#include "lib/hlo/literal.h"

namespace neuron::runtime {

class RandomTensors {
 public:
  explicit RandomTensors(uint64_t seed) : engine_(seed) {}
  hlo::Literal Next(const hlo::Shape& shape);

 private:
  std::mt19937_64 engine_;
};

}  // namespace neuron::runtime

#endif  // NEURON_LIB_RUNTIME_CLI_RANDOM_H_
