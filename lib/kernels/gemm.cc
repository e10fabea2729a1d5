#include "lib/kernels/gemm.h"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "lib/kernels/dnnl_library.h"
#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {

namespace {

// Set per execution; several executables may run at once (one per device).
std::atomic<int> g_threads{2};

// OpenBLAS runs single-threaded; the executor's own pool splits big
// products by rows. OpenBLAS's workers would otherwise spin after every
// call and take a core from the elementwise kernels that follow.
void InitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}


// Below this many multiply-adds a second thread does not pay.
constexpr double kParallelFlops = 1 << 22;

// oneDNN's sgemm: the faster f32 GEMM here (bench/gemm_peers.sh), from
// the lazily opened libdnnl. Null when libdnnl is not installed; OpenBLAS
// then does the work.
using DnnlSgemmFn = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t,
                            const float*, int64_t, float, float*, int64_t);

DnnlSgemmFn DnnlSgemm() {
  static const DnnlSgemmFn fn = [] {
    void* h = DnnlHandle();
    return h == nullptr ? nullptr : reinterpret_cast<DnnlSgemmFn>(dlsym(h, "dnnl_sgemm"));
  }();
  return fn;
}

bool SgemmWithDnnl(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  DnnlSgemmFn sgemm = DnnlSgemm();
  if (sgemm == nullptr) return false;
  DnnlUseThreads(g_threads.load(std::memory_order_relaxed));
  return sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) == 0;
}

}  // namespace

static void SgemmSerial(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                        int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

void Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
           int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  InitOnce();
  if (m > 0 && n > 0 && k > 0 && SgemmWithDnnl(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)) return;
  int parts = std::min(g_threads.load(std::memory_order_relaxed), ThreadPool::Global().max_parallelism());
  if (parts < 2 || static_cast<double>(m) * n * k < kParallelFlops ||
      std::max(m, n) < 16 * parts) {
    SgemmSerial(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  // Split C along its larger side so each thread packs only its share of
  // the bigger operand. Row i of op(A) starts at a + i*lda (a + i when A is
  // stored transposed); column j of op(B) at b + j (b + j*ldb).
  if (m > n) {
    ThreadPool::Global().Run(parts, [&](int p) {
      int64_t r0 = m * p / parts, r1 = m * (p + 1) / parts;
      const float* ap = ta ? a + r0 : a + r0 * lda;
      SgemmSerial(ta, tb, r1 - r0, n, k, ap, lda, b, ldb, c + r0 * ldc, ldc);
    });
  } else {
    ThreadPool::Global().Run(parts, [&](int p) {
      // Column blocks on 16-float boundaries keep stores cache-line aligned.
      int64_t c0 = (n * p / parts) / 16 * 16, c1 = p + 1 == parts ? n : (n * (p + 1) / parts) / 16 * 16;
      const float* bp = tb ? b + c0 * ldb : b + c0;
      SgemmSerial(ta, tb, m, c1 - c0, k, a, lda, bp, ldb, c + c0, ldc);
    });
  }
}

static void SgemmSerial(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                        int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = 0;
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f,
              a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0f, c,
              static_cast<blasint>(ldc));
}

void Dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a,
           int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc) {
  InitOnce();
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = 0;
    return;
  }
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0,
              a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), 0.0, c,
              static_cast<blasint>(ldc));
}

void SetGemmThreads(int threads) {
  // Every execution sets it: stored only when it changes, so that cores
  // running at once do not pass its cache line back and forth.
  const int want = std::max(1, threads);
  if (g_threads.load(std::memory_order_relaxed) != want) g_threads.store(want, std::memory_order_relaxed);
}

int GemmThreads() { return g_threads.load(std::memory_order_relaxed); }

int KernelParts() { return std::min(GemmThreads(), ThreadPool::Global().max_parallelism()); }

}  // namespace neuron::kernels
