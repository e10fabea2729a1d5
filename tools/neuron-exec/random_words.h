// The random source behind neuron-exec --random-inputs: a stream of uniform
// 32-bit words fixed by (seed, stream), cut into blocks of kBlockWords that
// each start from their own state, so any range of blocks can be generated
// on its own (in parallel) and word i is the same however the work is split.
// Each block runs 16 xoshiro128+ generators side by side (word 16*j + l is
// step j of lane l), which the compiler turns into AVX2 vector code.
// xoshiro128+ is the fastest of its family; its low bits are weak, so every
// consumer takes values from the high bits (its authors' advice for floats).
#ifndef NEURON_TOOLS_NEURON_EXEC_RANDOM_WORDS_H_
#define NEURON_TOOLS_NEURON_EXEC_RANDOM_WORDS_H_

#include <cstdint>

namespace neuron::exec_tool {

class RandomWords {
 public:
  static constexpr int kLanes = 16;
  static constexpr int64_t kBlockWords = int64_t{1} << 16;

  // A block's generator, positioned at its first word.
  RandomWords(uint64_t seed, uint64_t stream, int64_t block);

  // The next `count` words of the block; count is a multiple of kLanes.
  void Fill(uint32_t* out, int64_t count);

 private:
  // state_[w][l]: word w of lane l's xoshiro128+ state.
  alignas(64) uint32_t state_[4][kLanes];
};

}  // namespace neuron::exec_tool

#endif  // NEURON_TOOLS_NEURON_EXEC_RANDOM_WORDS_H_
