#include "lib/kernels/low_precision_gemm.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl_types.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>
#include <vector>

#include "lib/kernels/dnnl_library.h"
#include "lib/kernels/gemm.h"

namespace neuron::kernels {
namespace {

using hlo::ElementType;

std::atomic<bool> g_enabled{true};
std::atomic<int64_t> g_products{0};

using DnnlApi = ::neuron::kernels::DnnlApi;

// CPUID leaf 7: AVX512_BF16 (subleaf 1, EAX bit 5), AMX-BF16 (subleaf 0,
// EDX bit 22), AVX512_FP16 (subleaf 0, EDX bit 23). The OS must also keep
// the AVX-512 state (XCR0 bits 5-7 with SSE/AVX, bits 1-2).
bool CpuHasNative(ElementType type) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE
  unsigned xcr0_lo, xcr0_hi;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 0xe6) != 0xe6) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool amx_bf16 = d & (1u << 22), avx512_fp16 = d & (1u << 23);
  if (type == ElementType::kF16) return avx512_fp16;
  unsigned a1, b1, c1, d1;
  const bool avx512_bf16 = __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1) && (a1 & (1u << 5));
  return avx512_bf16 || amx_bf16;
}

dnnl_data_type_t DnnlType(ElementType t) {
  switch (t) {
    case ElementType::kBF16: return dnnl_bf16;
    case ElementType::kF16: return dnnl_f16;
    case ElementType::kF32: return dnnl_f32;
    default: return dnnl_data_type_undef;
  }
}

// A created primitive for one product shape; creating one costs far more
// than running it, so they live for the process. Null primitive: oneDNN
// refused the shape (or offered no native kernel), so don't ask again.
struct Matmul {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_desc_t src{}, weights{}, dst{}, scratchpad{};
  size_t scratchpad_bytes = 0;
};

using Key = std::tuple<ElementType, ElementType, int64_t, int64_t, int64_t, int64_t, bool, bool>;

// Row-major [batch,] rows x cols, stored transposed when `trans`.
bool Describe(const DnnlApi& api, dnnl_memory_desc_t* md, ElementType t, int64_t batch,
              int64_t rows, int64_t cols, bool trans) {
  dnnl_dims_t dims = {}, strides = {};
  int nd = batch == 1 ? 2 : 3;
  int o = nd - 2;
  if (nd == 3) {
    dims[0] = batch;
    strides[0] = rows * cols;
  }
  dims[o] = rows;
  dims[o + 1] = cols;
  strides[o] = trans ? 1 : cols;
  strides[o + 1] = trans ? rows : 1;
  return api.memory_desc_init_by_strides(md, nd, dims, DnnlType(t), strides) == dnnl_success;
}

// Whether oneDNN's chosen kernel (e.g. "brg:avx512_core_amx_bf16") uses
// the type's own instructions. Its reference loops, and its emulation on
// older ISAs ("gemm:jit" when ONEDNN_MAX_CPU_ISA=AVX512_CORE: the MLP
// benchmark ran 2.5x slower than f32), lose to widening for sgemm.
bool NativeKernel(ElementType type, const char* impl) {
  if (impl == nullptr) return false;
  std::string_view name(impl);
  if (name.find("amx") != std::string_view::npos) return true;
  return name.find(type == ElementType::kF16 ? "fp16" : "bf16") != std::string_view::npos;
}

Matmul Create(const DnnlApi& api, const Key& key) {
  auto [type, out_type, batch, m, n, k, ta, tb] = key;
  Matmul mm;
  dnnl_matmul_desc_t desc;
  if (!Describe(api, &mm.src, type, batch, m, k, ta) ||
      !Describe(api, &mm.weights, type, batch, k, n, tb) ||
      !Describe(api, &mm.dst, out_type, batch, m, n, false) ||
      api.matmul_desc_init(&desc, &mm.src, &mm.weights, nullptr, &mm.dst) != dnnl_success)
    return mm;
  // The caller's scratchpad, so that products of several executables can
  // run at once on one primitive.
  dnnl_primitive_attr_t attr = nullptr;
  if (api.primitive_attr_create(&attr) != dnnl_success) return mm;
  api.primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_status_t st = api.primitive_desc_create(&pd, &desc, attr, api.engine, nullptr);
  api.primitive_attr_destroy(attr);
  if (st != dnnl_success) return mm;  // dnnl_unimplemented: no kernel for it here
  const char* impl = nullptr;
  api.primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  if (NativeKernel(type, impl)) {
    const dnnl_memory_desc_t* sp = api.primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (sp != nullptr) {
      mm.scratchpad = *sp;
      mm.scratchpad_bytes = api.memory_desc_get_size(sp);
    }
    if (api.primitive_create(&mm.primitive, pd) != dnnl_success) mm.primitive = nullptr;
  }
  api.primitive_desc_destroy(pd);
  return mm;
}

const Matmul& Lookup(const DnnlApi& api, const Key& key) {
  static std::mutex mu;
  static std::map<Key, Matmul> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, Create(api, key)).first;
  return it->second;  // map nodes stay put; entries are never removed
}

}  // namespace

bool LowPrecisionGemmAvailable(ElementType type) {
  if (type != ElementType::kBF16 && type != ElementType::kF16) return false;
  if (!g_enabled.load(std::memory_order_relaxed)) return false;
  // The CPU's instructions are not enough: the oneDNN installed must have a
  // kernel that uses them (Debian's 2.6 has none for f16 matmul), asked once
  // with a small product.
  auto has_kernel = [](ElementType t) {
    return CpuHasNative(t) && Dnnl() != nullptr &&
           Lookup(*Dnnl(), Key{t, ElementType::kF32, 1, 64, 64, 64, false, false}).primitive != nullptr;
  };
  static const bool bf16 = has_kernel(ElementType::kBF16);
  static const bool f16 = has_kernel(ElementType::kF16);
  return type == ElementType::kBF16 ? bf16 : f16;
}

bool LowPrecisionGemm(ElementType type, ElementType out_type, int64_t batch, int64_t m,
                      int64_t n, int64_t k, bool ta, const void* a, bool tb, const void* b,
                      void* c) {
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0) return false;
  if (out_type != ElementType::kF32 && out_type != type) return false;
  if (!LowPrecisionGemmAvailable(type)) return false;
  const DnnlApi& api = *Dnnl();
  const Matmul& mm = Lookup(api, Key{type, out_type, batch, m, n, k, ta, tb});
  if (mm.primitive == nullptr) return false;

  // The caller's scratchpad, per thread, so that products of several
  // executables can run at once on one primitive.
  thread_local std::vector<uint8_t> scratchpad;
  if (scratchpad.size() < mm.scratchpad_bytes) scratchpad.resize(mm.scratchpad_bytes);
  const DnnlArg args[4] = {{DNNL_ARG_SRC, &mm.src, a},
                           {DNNL_ARG_WEIGHTS, &mm.weights, b},
                           {DNNL_ARG_DST, &mm.dst, c},
                           {DNNL_ARG_SCRATCHPAD, &mm.scratchpad, scratchpad.data()}};
  const bool ok = DnnlExecute(mm.primitive, args, mm.scratchpad_bytes > 0 ? 4 : 3, GemmThreads());
  if (ok) g_products.fetch_add(1, std::memory_order_relaxed);
  return ok;
}

int64_t LowPrecisionGemmProducts() { return g_products.load(std::memory_order_relaxed); }

void SetLowPrecisionGemmEnabled(bool enabled) { g_enabled = enabled; }

}  // namespace neuron::kernels
