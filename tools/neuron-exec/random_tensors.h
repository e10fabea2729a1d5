// neuron-exec --random-inputs: tensors drawn with the oracle's distribution
// (floats uniform in [-1, 1] rounded to the type, integers in [0, 10), pred
// 0 or 1), from a seed, parameter by parameter, so a run is reproducible.
//
// Parameter k (the k-th Next, counting tuple leaves) reads its own stream
// (seed, k) of random_words, one word per element (two for f64,
// two and four for c64 and c128): f32 is the word's top 24 bits over 2^23,
// and every narrower float is that f32 rounded to nearest even, so a bf16
// input holds exactly the rounding of the f32 input the same seed gives.
// One thread draws (a fresh buffer's page faults, not the arithmetic, bound
// the speed); the stream's blocks would let several draw the same values.
#ifndef NEURON_TOOLS_NEURON_EXEC_RANDOM_TENSORS_H_
#define NEURON_TOOLS_NEURON_EXEC_RANDOM_TENSORS_H_

#include <cstdint>

#include "lib/hlo/literal.h"

namespace neuron::exec_tool {

class RandomTensors {
 public:
  explicit RandomTensors(uint64_t seed) : seed_(seed) {}
  hlo::Literal Next(const hlo::Shape& shape);
  // The next array's values written straight to `out` (its storage bytes:
  // a device tensor), the same values Next would give.
  void NextInto(const hlo::Shape& shape, uint8_t* out);
  // Moves past the next value's streams without drawing them (an input
  // given by the user still takes its place in the order).
  void Skip(const hlo::Shape& shape);

 private:
  template <typename Sink>
  void FillBulk(hlo::ElementType type, int64_t n, uint64_t stream, Sink sink);
  hlo::Literal NextSlow(const hlo::Shape& shape, uint64_t stream);

  uint64_t seed_;
  uint64_t next_stream_ = 0;
};

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_RANDOM_TENSORS_H_
