// A bf16 weight matrix stored [k, n] (JAX and Flax store a projection
// [in, out]), transposed once to [n, k] and kept while its contents are
// unchanged, for the skinny products.
//
// On this CPU's tiles a [k, n] matrix has to be regrouped into pairs of
// rows on every call (staged through L2, which costs the tiles more work
// than the memory can hide: gemma3 1B's down projections read 20-22 GB/s),
// where an [n, k] one is loaded as it lies (25-27 GB/s). As the
// convolutions keep their reordered weights (frozen PyTorch prepacks the
// same way), a matrix seen at the same version twice in a row is taken to
// be frozen (inference; the caller names a module's constants by a version
// of their own): from then on its transpose, made on that call, is read
// instead, until its version changes. The copies take memory of their
// own, as much as the matrices; all of them together stay within a quarter
// of the host memory available when each is made, so a model too large for
// two copies keeps reading its matrices where they lie.
#ifndef NEURON_LIB_KERNELS_KEPT_TRANSPOSE_H_
#define NEURON_LIB_KERNELS_KEPT_TRANSPOSE_H_

#include <cstddef>
#include <cstdint>

namespace neuron::kernels {

class KeptTranspose {
 public:
  // `blocks` matrices [k, q], `k * q` elements apart, become one [blocks *
  // q, k]: row p * q + c holds column c of block p.
  KeptTranspose(int64_t blocks, int64_t k, int64_t q) : blocks_(blocks), k_(k), q_(q) {}
  ~KeptTranspose();
  KeptTranspose(const KeptTranspose&) = delete;
  KeptTranspose& operator=(const KeptTranspose&) = delete;

  // The transpose of the matrices at `w` (version `version` of their
  // contents; 0: unknown), or null where it is not kept: first sight of
  // these contents, an unknown version, or no room. Made on the call that
  // sees the same contents a second time.
  const uint16_t* Get(const uint16_t* w, uint64_t version);

  // Bytes of transposes kept by every KeptTranspose of the process.
  static uint64_t KeptBytes();

 private:
  size_t bytes() const;
  const int64_t blocks_, k_, q_;
  const uint16_t* seen_from_ = nullptr;
  uint64_t seen_version_ = 0;
  uint16_t* kept_ = nullptr;  // AllocateOnHugePages; claimed from the allowance
  bool valid_ = false;  // kept_ holds the transpose of seen_from_ at seen_version_
};

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_KEPT_TRANSPOSE_H_
