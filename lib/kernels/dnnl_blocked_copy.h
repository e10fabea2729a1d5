// A copy from a plain strided layout into one of oneDNN's blocked layouts,
// for the convolution weights oneDNN wants reordered on every call: JAX's
// HWIO kernels into ABcd8b8a went through oneDNN's generic reorder at
// about 1.5 GB/s, a third of resnet50's convolution time. Here each
// destination offset is a sum of per-dim terms, so the copy runs as
// memcpy of the runs that stay contiguous on both sides (eight output
// features of one input feature and tap, for HWIO into 8b8a).
#ifndef NEURON_LIB_KERNELS_DNNL_BLOCKED_COPY_H_
#define NEURON_LIB_KERNELS_DNNL_BLOCKED_COPY_H_

#include <oneapi/dnnl/dnnl_types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace neuron::kernels {

class BlockedCopy {
 public:
  // A plan, or nothing where this copy would not beat oneDNN's reorder:
  // `from` must be plain (strides only) and `to` blocked with each dim in
  // at most one inner block, both of the same dims and `elem_bytes`, and
  // the runs must be a few elements long. `to_bytes` is `to`'s size.
  static std::optional<BlockedCopy> Plan(const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to,
                                         size_t elem_bytes, size_t to_bytes);

  // dst (to_bytes) from src; padding of the blocked layout is zeroed.
  // Splits the work over `threads` threads of the global pool.
  void Run(const void* src, void* dst, int threads) const;

 private:
  struct Run1 {
    int64_t start, length;  // along the contiguous dim
  };
  void CopyOuter(const uint8_t* src, uint8_t* dst, int64_t first, int64_t last) const;

  size_t elem_bytes_ = 4, to_bytes_ = 0;
  bool zero_first_ = false;  // the blocked layout pads some dim
  // Dims other than the contiguous one: sizes, source strides and the
  // destination offset of each index (elements).
  std::vector<int64_t> outer_dims_, outer_src_strides_;
  std::vector<std::vector<int64_t>> outer_dst_terms_;
  int64_t outer_count_ = 1;
  // Along the source's contiguous dim: destination offset of each index,
  // and the runs contiguous in both.
  std::vector<int64_t> inner_dst_terms_;
  std::vector<Run1> runs_;
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_DNNL_BLOCKED_COPY_H_
