#include "lib/kernels/dnnl_blocked_copy.h"

#include <algorithm>
#include <cstring>

#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {
namespace {

// Runs shorter than this on average are left to oneDNN's reorder, whose
// vector kernels transpose small blocks better than memcpy moves them.
constexpr int64_t kMinAverageRun = 4;
// Below this a second thread costs more than it saves.
constexpr size_t kParallelBytes = size_t{1} << 20;

}  // namespace

std::optional<BlockedCopy> BlockedCopy::Plan(const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to,
                                             size_t elem_bytes, size_t to_bytes) {
  const int nd = from.ndims;
  if (nd < 1 || nd != to.ndims || from.format_kind != dnnl_blocked || to.format_kind != dnnl_blocked ||
      from.format_desc.blocking.inner_nblks != 0 || from.offset0 != 0 || to.offset0 != 0 ||
      from.data_type != to.data_type)
    return std::nullopt;
  for (int d = 0; d < nd; ++d)
    if (from.dims[d] != to.dims[d] || from.dims[d] < 1 || from.padded_offsets[d] != 0 ||
        to.padded_offsets[d] != 0 || from.padded_dims[d] != from.dims[d])
      return std::nullopt;
  // Each dim's inner block and the step between its positions inside it.
  const dnnl_blocking_desc_t& b = to.format_desc.blocking;
  std::vector<int64_t> block(nd, 1), inner_step(nd, 0);
  int64_t step = 1;
  for (int k = b.inner_nblks - 1; k >= 0; --k) {
    const int d = static_cast<int>(b.inner_idxs[k]);
    if (d < 0 || d >= nd || block[d] != 1 || b.inner_blks[k] < 1) return std::nullopt;
    block[d] = b.inner_blks[k];
    inner_step[d] = step;
    step *= b.inner_blks[k];
  }
  BlockedCopy c;
  c.elem_bytes_ = elem_bytes;
  c.to_bytes_ = to_bytes;
  auto terms = [&](int d) {
    std::vector<int64_t> t(from.dims[d]);
    for (int64_t x = 0; x < from.dims[d]; ++x) t[x] = x / block[d] * b.strides[d] + x % block[d] * inner_step[d];
    return t;
  };
  // The source's contiguous dim (stride 1; the smallest stride of a dim
  // longer than one otherwise).
  int inner = -1;
  for (int d = 0; d < nd; ++d)
    if (from.dims[d] > 1 && (inner < 0 || from.format_desc.blocking.strides[d] < from.format_desc.blocking.strides[inner]))
      inner = d;
  if (inner < 0) inner = nd - 1;
  if (from.dims[inner] > 1 && from.format_desc.blocking.strides[inner] != 1) return std::nullopt;
  c.inner_dst_terms_ = terms(inner);
  for (int64_t x = 0; x < from.dims[inner];) {
    int64_t len = 1;
    while (x + len < from.dims[inner] && c.inner_dst_terms_[x + len] == c.inner_dst_terms_[x] + len) ++len;
    c.runs_.push_back({x, len});
    x += len;
  }
  if (from.dims[inner] < kMinAverageRun * static_cast<int64_t>(c.runs_.size())) return std::nullopt;
  for (int d = 0; d < nd; ++d) {
    if (to.padded_dims[d] != to.dims[d]) c.zero_first_ = true;
    if (d == inner) continue;
    c.outer_dims_.push_back(from.dims[d]);
    c.outer_src_strides_.push_back(from.format_desc.blocking.strides[d]);
    c.outer_dst_terms_.push_back(terms(d));
    c.outer_count_ *= from.dims[d];
  }
  return c;
}

// Outer positions [first, last) in row-major order of the outer dims.
void BlockedCopy::CopyOuter(const uint8_t* src, uint8_t* dst, int64_t first, int64_t last) const {
  const int n = static_cast<int>(outer_dims_.size());
  std::vector<int64_t> idx(n, 0);
  int64_t rem = first;
  for (int d = n - 1; d >= 0; --d) {
    idx[d] = rem % outer_dims_[d];
    rem /= outer_dims_[d];
  }
  const size_t es = elem_bytes_;
  for (int64_t o = first; o < last; ++o) {
    int64_t s = 0, t = 0;
    for (int d = 0; d < n; ++d) {
      s += idx[d] * outer_src_strides_[d];
      t += outer_dst_terms_[d][idx[d]];
    }
    for (const Run1& r : runs_)
      std::memcpy(dst + (t + inner_dst_terms_[r.start]) * es, src + (s + r.start) * es, r.length * es);
    for (int d = n - 1; d >= 0; --d) {
      if (++idx[d] < outer_dims_[d]) break;
      idx[d] = 0;
    }
  }
}

void BlockedCopy::Run(const void* src, void* dst, int threads) const {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* t = static_cast<uint8_t*>(dst);
  if (zero_first_) std::memset(t, 0, to_bytes_);
  const int parts = to_bytes_ >= kParallelBytes
                        ? static_cast<int>(std::min<int64_t>(
                              {threads, ThreadPool::Global().max_parallelism(), outer_count_}))
                        : 1;
  if (parts < 2) {
    CopyOuter(s, t, 0, outer_count_);
    return;
  }
  ThreadPool::Global().Run(parts, [&](int p) {
    CopyOuter(s, t, outer_count_ * p / parts, outer_count_ * (p + 1) / parts);
  });
}

}  // namespace neuron::kernels
