#include "tools/neuron-exec/random_tensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "tools/neuron-exec/random_values.h"
#include "tools/neuron-exec/random_words.h"

namespace neuron::exec_tool {
namespace {

// Words are made and consumed in chunks small enough to stay in L1.
constexpr int64_t kChunkWords = 4096;
static_assert(RandomWords::kBlockWords % kChunkWords == 0);

// Words per element: 2 for f64 and c64, 4 for c128, 1 otherwise. A chunk
// holds whole elements, so no element straddles two blocks.
int WordsPerElement(hlo::ElementType type) {
  switch (type) {
    case hlo::ElementType::kF64:
    case hlo::ElementType::kC64:
      return 2;
    case hlo::ElementType::kC128:
      return 4;
    default:
      return 1;
  }
}

// Whether `type` has a bulk conversion (ConvertChunk); the others go one
// element at a time through Literal::SetDouble / SetInt.
bool HasBulkConversion(hlo::ElementType type) {
  switch (type) {
    case hlo::ElementType::kF32:
    case hlo::ElementType::kC64:
    case hlo::ElementType::kF64:
    case hlo::ElementType::kC128:
    case hlo::ElementType::kPred:
    case hlo::ElementType::kS8:
    case hlo::ElementType::kU8:
    case hlo::ElementType::kS16:
    case hlo::ElementType::kU16:
    case hlo::ElementType::kS32:
    case hlo::ElementType::kU32:
    case hlo::ElementType::kS64:
    case hlo::ElementType::kU64:
      return true;
    default:
      return HasFastUnitRounding(type);
  }
}

// `count` words (whole elements) as elements of `type` at `out`.
void ConvertChunk(hlo::ElementType type, const uint32_t* words, int64_t count, uint8_t* out) {
  const int64_t n = count / WordsPerElement(type);
  switch (type) {
    case hlo::ElementType::kF32:
    case hlo::ElementType::kC64:  // (re, im) pairs of f32
      WordsToUnitF32(words, reinterpret_cast<float*>(out), count);
      return;
    case hlo::ElementType::kF64:
    case hlo::ElementType::kC128:
      WordsToUnitF64(words, reinterpret_cast<double*>(out), count / 2);
      return;
    case hlo::ElementType::kPred:
      WordsToBits(words, out, n);
      return;
    default:
      break;
  }
  if (HasFastUnitRounding(type)) {
    WordsToUnitNarrow(type, words, out, n);
  } else {
    WordsToDigits(words, out, hlo::StorageBytes(type), n);
  }
}

// Calls fn(first_word, words, count) over words [begin, end) of the stream
// in order, a chunk at a time; `begin` starts a block.
template <typename Fn>
void ForEachChunk(uint64_t seed, uint64_t stream, int64_t begin, int64_t end, Fn fn) {
  alignas(64) uint32_t words[kChunkWords];
  for (int64_t start = begin; start < end; start += RandomWords::kBlockWords) {
    RandomWords gen(seed, stream, start / RandomWords::kBlockWords);
    const int64_t stop = std::min(end, start + RandomWords::kBlockWords);
    for (int64_t w = start; w < stop; w += kChunkWords) {
      const int64_t count = std::min(kChunkWords, stop - w);
      gen.Fill(words,
               (count + RandomWords::kLanes - 1) / RandomWords::kLanes * RandomWords::kLanes);
      fn(w, words, count);
    }
  }
}

// Tensors of at least this many words are drawn on several threads.
constexpr int64_t kParallelWords = 64 * RandomWords::kBlockWords;  // 16 MiB of f32

}  // namespace

hlo::Literal RandomTensors::Next(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    std::vector<hlo::Literal> elements;
    for (const hlo::Shape& s : shape.tuple) elements.push_back(Next(s));
    return hlo::Literal::MakeTuple(std::move(elements));
  }
  const int64_t n = shape.IsArray() ? shape.ElementCount().value_or(0) : 0;
  if (n == 0 || !HasBulkConversion(shape.type)) return NextSlow(shape, next_stream_++);
  // The bytes are appended a chunk at a time to a reserved buffer, so each
  // is written once: zeroing a fresh buffer first costs as much again.
  std::vector<uint8_t> data;
  data.reserve(static_cast<size_t>(n) * hlo::StorageBytes(shape.type));
  FillBulk(shape.type, n, next_stream_++, [&](const uint8_t* bytes, size_t count) {
    data.insert(data.end(), bytes, bytes + count);
  });
  return hlo::Literal::FromData(shape, std::move(data));
}

void RandomTensors::NextInto(const hlo::Shape& shape, uint8_t* out) {
  const int64_t n = shape.IsArray() ? shape.ElementCount().value_or(0) : 0;
  if (n == 0 || !HasBulkConversion(shape.type)) {
    const hlo::Literal value = NextSlow(shape, next_stream_++);
    if (!value.data().empty()) std::memcpy(out, value.data().data(), value.data().size());
    return;
  }
  const hlo::ElementType type = shape.type;
  const int64_t total = n * WordsPerElement(type);
  const int64_t bytes_per_word = hlo::StorageBytes(type) / WordsPerElement(type);
  const uint64_t stream = next_stream_++;
  // Words [begin, end), converted in place: every block stands alone, so the
  // values do not depend on how the range is split.
  auto draw = [&](int64_t begin, int64_t end) {
    ForEachChunk(seed_, stream, begin, end, [&](int64_t first, const uint32_t* words, int64_t count) {
      ConvertChunk(type, words, count, out + first * bytes_per_word);
    });
  };
  // A large tensor on every core: the drawing and the first touch of its
  // pages (a fault each, slow for fresh memory under a hypervisor) both
  // split.
  const int64_t blocks = (total + RandomWords::kBlockWords - 1) / RandomWords::kBlockWords;
  const int parts = total < kParallelWords
                        ? 1
                        : static_cast<int>(std::clamp<int64_t>(std::thread::hardware_concurrency(), 1,
                                                               std::min<int64_t>(blocks, 16)));
  // Part p's first word: a block boundary (or the end).
  auto part_begin = [&](int p) { return std::min(total, blocks * p / parts * RandomWords::kBlockWords); };
  std::vector<std::thread> helpers;
  for (int p = 1; p < parts; ++p) helpers.emplace_back(draw, part_begin(p), part_begin(p + 1));
  draw(part_begin(0), part_begin(1));
  for (std::thread& t : helpers) t.join();
}

void RandomTensors::Skip(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    for (const hlo::Shape& s : shape.tuple) Skip(s);
    return;
  }
  ++next_stream_;
}

template <typename Sink>
void RandomTensors::FillBulk(hlo::ElementType type, int64_t n, uint64_t stream, Sink sink) {
  const int per = WordsPerElement(type);
  const int bytes_per_word = hlo::StorageBytes(type) / per;
  alignas(64) uint8_t staged[kChunkWords * 8];  // s64: 8 bytes a word
  ForEachChunk(seed_, stream, 0, n * per, [&](int64_t, const uint32_t* words, int64_t count) {
    ConvertChunk(type, words, count, staged);
    sink(staged, static_cast<size_t>(count * bytes_per_word));
  });
}

// Types without a bulk conversion, one element at a time.
hlo::Literal RandomTensors::NextSlow(const hlo::Shape& shape, uint64_t stream) {
  const hlo::ElementType type = shape.type;
  const int64_t n = shape.IsArray() ? shape.ElementCount().value_or(0) : 0;
  hlo::Literal value = hlo::Literal::Zeros(shape);
  ForEachChunk(seed_, stream, 0, n * WordsPerElement(type),
               [&](int64_t first, const uint32_t* words, int64_t count) {
    float unit[kChunkWords];
    WordsToUnitF32(words, unit, count);
    for (int64_t i = 0; i < count; ++i) {
      if (hlo::IsFloatingPoint(type)) {
        double v = unit[i];
        // e8m0fnu has neither sign nor zero: it holds the magnitude, and
        // a zero draw as its smallest value, so it never becomes NaN.
        if (type == hlo::ElementType::kF8E8M0FNU) {
          v = v == 0 ? std::ldexp(1.0, -127) : std::fabs(v);
        }
        value.SetDouble(first + i, v);
      } else {
        value.SetInt(first + i, ((words[i] >> 16) * 10) >> 16);  // as WordsToDigits
      }
    }
  });
  return value;
}

}  // namespace neuron::exec_tool
