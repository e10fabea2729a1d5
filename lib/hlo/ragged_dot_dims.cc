#include "lib/hlo/ragged_dot_dims.h"

#include <algorithm>

namespace neuron::hlo {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

RaggedDotMode RaggedDotModeOf(const DotDims& d) {
  const int64_t ragged = d.lhs_ragged.front();
  if (Contains(d.lhs_batch, ragged)) return RaggedDotMode::kBatch;
  if (Contains(d.lhs_contracting, ragged)) return RaggedDotMode::kContracting;
  return RaggedDotMode::kNonContracting;
}

std::vector<int64_t> RaggedDotGroupPrefix(const DotDims& d, int64_t lhs_rank) {
  const int64_t ragged = d.lhs_ragged.front();
  std::vector<int64_t> prefix;
  switch (RaggedDotModeOf(d)) {
    case RaggedDotMode::kBatch:
      for (int64_t b : d.lhs_batch) {
        if (b == ragged) break;
        prefix.push_back(b);
      }
      return prefix;
    case RaggedDotMode::kContracting:
      prefix = d.lhs_batch;
      for (int64_t c : d.lhs_contracting) {
        if (c == ragged) break;
        prefix.push_back(c);
      }
      return prefix;
    case RaggedDotMode::kNonContracting:
      prefix = d.lhs_batch;
      for (int64_t i = 0; i < ragged && i < lhs_rank; ++i)
        if (!Contains(d.lhs_batch, i) && !Contains(d.lhs_contracting, i)) prefix.push_back(i);
      return prefix;
  }
  return prefix;
}

}  // namespace neuron::hlo
