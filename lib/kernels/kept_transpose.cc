#include "lib/kernels/kept_transpose.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>

#include "lib/kernels/thread_pool.h"
#include "lib/support/host_memory.h"

namespace neuron::kernels {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

std::atomic<uint64_t> g_kept_bytes{0};

// Claims `bytes` of the process's allowance for kept transposes: a quarter
// of the host memory available now (nothing where that is unknown).
bool Claim(uint64_t bytes) {
  const uint64_t available = HostMemoryAvailable();
  uint64_t kept = g_kept_bytes.load();
  do {
    if (available == 0 || kept + bytes > available / 4) return false;
  } while (!g_kept_bytes.compare_exchange_weak(kept, kept + bytes));
  return true;
}

// out[r][i] = in[r's block][i][r's column] for rows [r0, r1) of the
// [blocks * q, k] result, in 32 x 32 squares so both sides stay in cache.
void TransposeRows(const uint16_t* in, int64_t k, int64_t q, int64_t r0, int64_t r1, uint16_t* out) {
  constexpr int64_t kSquare = 32;
  for (int64_t rs = r0; rs < r1; rs += kSquare) {
    const int64_t re = std::min(r1, rs + kSquare);
    for (int64_t is = 0; is < k; is += kSquare) {
      const int64_t ie = std::min(k, is + kSquare);
      for (int64_t r = rs; r < re; ++r) {
        const uint16_t* column = in + (r / q) * k * q + r % q;
        uint16_t* row = out + r * k;
        for (int64_t i = is; i < ie; ++i) row[i] = column[i * q];
      }
    }
  }
}

}  // namespace

KeptTranspose::~KeptTranspose() { Release(); }

void KeptTranspose::Release() {
  if (mapping_ != nullptr) {
    munmap(mapping_, mapped_);
    g_kept_bytes -= static_cast<uint64_t>(blocks_ * q_ * k_) * sizeof(uint16_t);
  }
  mapping_ = nullptr;
  kept_ = nullptr;
  mapped_ = 0;
  valid_ = false;
}

uint64_t KeptTranspose::KeptBytes() { return g_kept_bytes.load(); }

const uint16_t* KeptTranspose::Get(const uint16_t* w, uint64_t version) {
  const bool unchanged = version != 0 && version == seen_version_ && w == seen_from_;
  seen_from_ = w;
  seen_version_ = version;
  if (!unchanged) {
    valid_ = false;
    return nullptr;
  }
  if (valid_) return kept_;
  const int64_t rows = blocks_ * q_;
  const size_t bytes = static_cast<size_t>(rows * k_) * sizeof(uint16_t);
  if (kept_ == nullptr) {
    if (!Claim(bytes)) return nullptr;
    // Read whole on every call: on 2 MiB pages where the kernel gives
    // them, as the device memory's weights are.
    const size_t mapped = bytes + kHugePage;
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      g_kept_bytes -= bytes;
      return nullptr;
    }
    mapping_ = p;
    mapped_ = mapped;
    const uintptr_t start = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
    kept_ = reinterpret_cast<uint16_t*>(start);
    madvise(kept_, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  }
  // Split by rows of the result over the threads (each writes its own).
  const int parts = std::max(1, std::min<int>(ThreadPool::Global().max_parallelism(), static_cast<int>(rows / 32)));
  ThreadPool::Global().Run(parts, [&](int t) {
    const int64_t r0 = rows * t / parts, r1 = rows * (t + 1) / parts;
    TransposeRows(w, k_, q_, r0, r1, kept_);
  });
  valid_ = true;
  return kept_;
}

}  // namespace neuron::kernels
