// libdnnl.so.2 (oneDNN), opened with dlopen on first use: linking it would
// slow every tool's start-up, and the kernels work without it (OpenBLAS and
// plain conversions take over). Shared by the f32 GEMM (gemm.cc) and the
// bf16/f16 matmul (low_precision_gemm.cc).
#ifndef NEURON_LIB_KERNELS_DNNL_LIBRARY_H_
#define NEURON_LIB_KERNELS_DNNL_LIBRARY_H_

namespace neuron::kernels {

// The library's handle for dlsym, or null when it is not installed (or in
// sanitizer builds, see dnnl_library.cc).
void* DnnlHandle();

// Makes oneDNN's OpenMP team `threads` wide before a call; cheap when the
// count is unchanged.
void DnnlUseThreads(int threads);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_DNNL_LIBRARY_H_
