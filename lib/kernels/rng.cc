#include "lib/kernels/rng.h"

#include <cmath>
#include <cstring>

#include "lib/kernels/element_convert.h"

namespace neuron::kernels {

void Philox4x32(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
  uint32_t k[2] = {key[0], key[1]};
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c[0];
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c[2];
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0];
    uint32_t n1 = static_cast<uint32_t>(p1);
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1];
    uint32_t n3 = static_cast<uint32_t>(p0);
    c[0] = n0; c[1] = n1; c[2] = n2; c[3] = n3;
    k[0] += 0x9E3779B9u;
    k[1] += 0xBB67AE85u;
  }
  std::memcpy(out, c, 16);
}

namespace {

using hlo::Opcode;

// Fills `bytes` bytes with Philox blocks for key/counter; returns blocks used.
uint64_t FillBits(uint64_t key, uint64_t counter, uint8_t* dst, int64_t bytes) {
  uint32_t k[2] = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
  uint64_t blocks = 0;
  for (int64_t off = 0; off < bytes; off += 16, ++blocks) {
    uint64_t c = counter + blocks;
    uint32_t ctr[4] = {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0};
    uint32_t out[4];
    Philox4x32(ctr, k, out);
    std::memcpy(dst + off, out, std::min<int64_t>(16, bytes - off));
  }
  return blocks;
}

class BitGenerator : public RngKernel {
 public:
  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) override {
    const Buf& state = *ins[0];
    Buf& new_state = *outs[0];
    std::memcpy(new_state.data, state.data, state.bytes);
    uint64_t words[3] = {0, 0, 0};
    std::memcpy(words, state.data, std::min<int64_t>(state.bytes, 24));
    uint64_t blocks = 0;
    for (size_t i = 1; i < outs.size(); ++i) {
      Buf& o = *outs[i];
      blocks += FillBits(words[0], words[1] + blocks, o.data, o.bytes);
      if (o.type == hlo::ElementType::kPred) for (int64_t j = 0; j < o.count; ++j) o.data[j] &= 1;
    }
    words[1] += blocks;
    std::memcpy(new_state.data, words, std::min<int64_t>(new_state.bytes, 16));
  }
};

class RandomValues : public RngKernel {
 public:
  explicit RandomValues(bool normal) : normal_(normal) {}
  void Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) override {
    Buf& o = *outs[0];
    double a = LoadDouble(ins[0]->type, ins[0]->data, 0);
    double b = LoadDouble(ins[1]->type, ins[1]->data, 0);
    std::vector<uint64_t> bits(o.count + 1);
    counter_ += FillBits(0x5eed5eedull, counter_, reinterpret_cast<uint8_t*>(bits.data()), o.count * 8);
    for (int64_t i = 0; i < o.count; ++i) {
      double u = (static_cast<double>(bits[i] >> 11) + 0.5) * 0x1.0p-53;
      double v;
      if (normal_) {
        double u2 = (static_cast<double>((bits[i] * 0x9e3779b97f4a7c15ull) >> 11) + 0.5) * 0x1.0p-53;
        v = a + b * std::sqrt(-2.0 * std::log(u)) * std::cos(2 * M_PI * u2);
      } else if (DomainOf(o.type) == Domain::kI64) {
        int64_t lo = static_cast<int64_t>(a), hi = static_cast<int64_t>(b);
        StoreInt(o.type, o.data, i, hi > lo ? lo + static_cast<int64_t>(bits[i] % static_cast<uint64_t>(hi - lo)) : lo);
        continue;
      } else {
        v = a + (b - a) * u;
      }
      StoreDouble(o.type, o.data, i, v);
    }
  }

 private:
  bool normal_;
  uint64_t counter_ = 0;
};

class StateCounter : public RngKernel {
 public:
  void Run(const std::vector<const Buf*>&, const std::vector<Buf*>& outs) override {
    Buf& o = *outs[0];
    std::memset(o.data, 0, o.bytes);
    std::memcpy(o.data, &state_, std::min<int64_t>(8, o.bytes));
    ++state_;
  }

 private:
  uint64_t state_ = 0x7b;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RngKernel>> PlanRng(const hlo::Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kRngBitGenerator:
      if (!instr.shape().IsTuple() || instr.operand_count() != 1)
        return absl::InvalidArgumentError("rng-bit-generator needs a state operand and a tuple result");
      return std::unique_ptr<RngKernel>(new BitGenerator());
    case Opcode::kRng:
      // XLA's rng takes (a, b); some builders append the result shape as a
      // third operand, which the instruction's own shape already gives.
      if (instr.operand_count() < 2) return absl::InvalidArgumentError("rng needs two operands");
      return std::unique_ptr<RngKernel>(new RandomValues(instr.attrs().distribution == "rng_normal"));
    default:
      return std::unique_ptr<RngKernel>(new StateCounter());
  }
}

}  // namespace neuron::kernels
