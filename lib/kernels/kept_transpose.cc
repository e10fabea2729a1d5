#include "lib/kernels/kept_transpose.h"

#include <atomic>
#include <cstdlib>

#include "lib/kernels/aligned_bytes.h"
#include "lib/kernels/buffer.h"
#include "lib/kernels/data_movement.h"
#include "lib/support/host_memory.h"

namespace neuron::kernels {
namespace {

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

}  // namespace

size_t KeptTranspose::bytes() const { return static_cast<size_t>(blocks_ * q_ * k_) * sizeof(uint16_t); }

KeptTranspose::~KeptTranspose() {
  if (kept_ == nullptr) return;
  std::free(kept_);
  g_kept_bytes -= bytes();
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
  if (kept_ == nullptr) {
    if (!Claim(bytes())) return nullptr;
    // Read whole on every call: on huge pages, as the device memory's
    // weights are.
    kept_ = static_cast<uint16_t*>(AllocateOnHugePages(bytes()));
    if (kept_ == nullptr) {
      g_kept_bytes -= bytes();
      return nullptr;
    }
  }
  // [blocks][k][q] -> [blocks][q][k]: row p * q + c is column c of block p.
  Buf from = Buf::Of(hlo::ElementType::kBF16, {blocks_, k_, q_});
  Buf to = Buf::Of(hlo::ElementType::kBF16, {blocks_, q_, k_});
  from.data = reinterpret_cast<uint8_t*>(const_cast<uint16_t*>(w));
  to.data = reinterpret_cast<uint8_t*>(kept_);
  Transpose(from, {0, 2, 1}, to);
  valid_ = true;
  return kept_;
}

}  // namespace neuron::kernels
