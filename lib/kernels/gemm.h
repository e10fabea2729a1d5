// The GEMM libraries behind dot and convolution, row-major. f32 goes to
// oneDNN's dnnl_sgemm (faster here, see bench/gemm_peers.sh), loaded with
// dlopen on first use so tools start fast; OpenBLAS (static) does f64 and
// is the f32 fallback when libdnnl is absent, split over the executor's
// threads.
#ifndef NEURON_LIB_KERNELS_GEMM_H_
#define NEURON_LIB_KERNELS_GEMM_H_

#include <cstdint>

namespace neuron::kernels {

// C[m,n] = sum_k A[m,k] * B[k,n] (beta = 0), A/B optionally transposed.
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
           const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
           int64_t ldc);
void Dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
           const double* a, int64_t lda, const double* b, int64_t ldb, double* c,
           int64_t ldc);
// Threads a product may use (the executor's pool; set per execution).
void SetGemmThreads(int threads);
int GemmThreads();
// The parts a kernel splits its work into: GemmThreads(), at most what the
// pool runs at once.
int KernelParts();

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_GEMM_H_
