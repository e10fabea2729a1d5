#include "tools/neuron-exec/random_words.h"

#include <cstring>

namespace neuron::exec_tool {
namespace {

// 8 lanes of 32 bits: one AVX2 register; two of them give the 16 lanes.
using U32x8 = uint32_t __attribute__((vector_size(32)));

// SplitMix64's output function: spreads (seed, stream, block, lane) over
// the state so neighbouring blocks and lanes start far apart.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline U32x8 Rotl(U32x8 x, int k) { return (x << k) | (x >> (32 - k)); }

}  // namespace

RandomWords::RandomWords(uint64_t seed, uint64_t stream, int64_t block) {
  const uint64_t key = Mix(Mix(seed) ^ stream);
  for (int l = 0; l < kLanes; ++l) {
    uint64_t x = Mix(key ^ Mix(static_cast<uint64_t>(block) * kLanes + l));
    const uint64_t a = Mix(x), b = Mix(x + 1);
    state_[0][l] = static_cast<uint32_t>(a);
    state_[1][l] = static_cast<uint32_t>(a >> 32);
    state_[2][l] = static_cast<uint32_t>(b);
    state_[3][l] = static_cast<uint32_t>(b >> 32) | 1;  // never all zero
  }
}

void RandomWords::Fill(uint32_t* out, int64_t count) {
  // Two independent halves of 8 lanes, interleaved so their dependency
  // chains overlap.
  U32x8 s[4][2];
  std::memcpy(s, state_, sizeof s);
  for (int64_t i = 0; i < count; i += kLanes) {
    for (int h = 0; h < 2; ++h) {
      const U32x8 result = s[0][h] + s[3][h];
      U32x8 t = s[1][h] << 9;
      s[2][h] ^= s[0][h];
      s[3][h] ^= s[1][h];
      s[1][h] ^= s[2][h];
      s[0][h] ^= s[3][h];
      s[2][h] ^= t;
      s[3][h] = Rotl(s[3][h], 11);
      std::memcpy(out + i + 8 * h, &result, sizeof result);
    }
  }
  std::memcpy(state_, s, sizeof s);
}

}  // namespace neuron::exec_tool
