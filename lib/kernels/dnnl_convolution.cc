#include "lib/kernels/dnnl_convolution.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "lib/kernels/aligned_bytes.h"
#include "lib/kernels/dnnl_blocked_copy.h"
#include "lib/kernels/dnnl_library.h"
#include "lib/kernels/gemm.h"
#include "lib/kernels/lazy_scratch.h"
#include "lib/kernels/low_precision_gemm.h"

namespace neuron::kernels {
namespace {

// A primitive and what running it needs; reorders between a plain layout
// and the convolution's own are optional (null when they are the same).
struct Primitive {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_desc_t scratchpad{};
  size_t scratchpad_bytes = 0;
};

dnnl_format_tag_t PlainTag(int ndims) {
  switch (ndims) {
    case 3: return dnnl_abc;
    case 4: return dnnl_abcd;
    case 5: return dnnl_abcde;
    case 6: return dnnl_abcdef;
    default: return dnnl_format_tag_undef;
  }
}

// Creates the primitive of `pd` with its scratchpad size; false on failure.
bool Instantiate(const DnnlApi& api, const_dnnl_primitive_desc_t pd, Primitive* p) {
  const dnnl_memory_desc_t* sp = api.primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  if (sp != nullptr) {
    p->scratchpad = *sp;
    p->scratchpad_bytes = api.memory_desc_get_size(sp);
  }
  return api.primitive_create(&p->primitive, pd) == dnnl_success;
}

dnnl_primitive_attr_t UserScratchpad(const DnnlApi& api) {
  dnnl_primitive_attr_t attr = nullptr;
  if (api.primitive_attr_create(&attr) != dnnl_success) return nullptr;
  api.primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  return attr;
}

// A reorder from `from` to `to`, or none (primitive null) when they match.
bool MakeReorder(const DnnlApi& api, const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to,
                 Primitive* r) {
  if (api.memory_desc_equal(&from, &to)) return true;
  dnnl_primitive_attr_t attr = UserScratchpad(api);
  dnnl_primitive_desc_t pd = nullptr;
  const bool ok = attr != nullptr &&
                  api.reorder_primitive_desc_create(&pd, &from, api.engine, &to, api.engine, attr) ==
                      dnnl_success &&
                  Instantiate(api, pd, r);
  if (pd != nullptr) api.primitive_desc_destroy(pd);
  if (attr != nullptr) api.primitive_attr_destroy(attr);
  return ok;
}

// oneDNN's reference kernels ("ref:any", "gemm:ref") are slower than our
// own im2col path; bf16 must also be on its own instructions.
bool FastKernel(hlo::ElementType type, const char* impl) {
  if (impl == nullptr) return false;
  std::string_view name(impl);
  if (name.find("ref") != std::string_view::npos) return false;
  if (type == hlo::ElementType::kBF16)
    return name.find("amx") != std::string_view::npos || name.find("bf16") != std::string_view::npos;
  return true;
}

}  // namespace

struct DnnlConvolution::Impl {
  const DnnlApi* api = nullptr;
  // Plain layouts of the operands and result, and the convolution's own.
  dnnl_memory_desc_t src_plain{}, weights_plain{}, dst_plain{};
  dnnl_memory_desc_t src{}, weights{}, dst{};
  Primitive conv, src_reorder, weights_reorder, dst_reorder;
  // The weights' reorder done as runs of memcpy, where that is faster.
  std::optional<BlockedCopy> weights_copy;
  // Storage for the reordered tensors and the scratchpads.
  LazyScratch src_buf, weights_buf, dst_buf, scratchpad;
  // The weights of the last call (pointer and version; 0: unknown), and
  // their reorder kept in memory of this kernel's own once they were seen
  // unchanged from one call to the next (weights_buf is step scratch that
  // other steps overwrite, so it keeps nothing).
  const void* seen_from = nullptr;
  uint64_t seen_version = 0;
  AlignedBytes kept;
  bool kept_valid = false;  // `kept` holds the reorder of seen_from at seen_version

  ~Impl() {
    for (Primitive* p : {&conv, &src_reorder, &weights_reorder, &dst_reorder})
      if (p->primitive != nullptr) api->primitive_destroy(p->primitive);
  }
};

DnnlConvolution::DnnlConvolution(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DnnlConvolution::~DnnlConvolution() = default;

std::unique_ptr<DnnlConvolution> DnnlConvolution::Create(const DnnlConvShape& s) {
  const int nsp = static_cast<int>(s.in_spatial.size());
  if (nsp < 1 || nsp > 3 || s.groups < 1 || s.in_features % s.groups != 0 ||
      s.out_features % s.groups != 0)
    return nullptr;
  for (int i = 0; i < nsp; ++i)
    if (s.pad_low[i] < 0 || s.pad_high[i] < 0 || s.strides[i] < 1 || s.dilations[i] < 1) return nullptr;
  if (s.operand_type != hlo::ElementType::kF32 &&
      !(s.operand_type == hlo::ElementType::kBF16 && LowPrecisionGemmAvailable(s.operand_type)))
    return nullptr;
  if (s.result_type != hlo::ElementType::kF32 && s.result_type != s.operand_type) return nullptr;
  const DnnlApi* api = Dnnl();
  if (api == nullptr) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->api = api;
  const dnnl_data_type_t type = s.operand_type == hlo::ElementType::kBF16 ? dnnl_bf16 : dnnl_f32;
  const dnnl_data_type_t result = s.result_type == hlo::ElementType::kBF16 ? dnnl_bf16 : dnnl_f32;

  dnnl_dims_t src_dims = {s.batch, s.in_features}, dst_dims = {s.batch, s.out_features};
  // Weights [G, O/G, C/G, K...] with groups, [O, C, K...] without.
  dnnl_dims_t w_dims = {};
  int w_nd = 0;
  if (s.groups > 1) w_dims[w_nd++] = s.groups;
  w_dims[w_nd++] = s.out_features / s.groups;
  w_dims[w_nd++] = s.in_features / s.groups;
  dnnl_dims_t strides = {}, dilates = {}, pad_l = {}, pad_r = {};
  for (int i = 0; i < nsp; ++i) {
    src_dims[2 + i] = s.in_spatial[i];
    dst_dims[2 + i] = s.out_spatial[i];
    w_dims[w_nd++] = s.kernel_spatial[i];
    strides[i] = s.strides[i];
    dilates[i] = s.dilations[i] - 1;  // oneDNN counts the holes
    pad_l[i] = s.pad_low[i];
    pad_r[i] = s.pad_high[i];
  }
  const DnnlApi& a = *api;
  // Where the operands lie: the caller's strides, or dense in dim order.
  auto plain = [&](dnnl_memory_desc_t* md, int nd, const dnnl_dims_t dims, dnnl_data_type_t t,
                   const dnnl_dims_t strides, bool given) {
    return (given ? a.memory_desc_init_by_strides(md, nd, dims, t, strides)
                  : a.memory_desc_init_by_tag(md, nd, dims, t, PlainTag(nd))) == dnnl_success;
  };
  dnnl_dims_t x_str = {}, w_str = {}, y_str = {};
  const bool x_given = !s.x_strides.empty(), w_given = !s.w_strides.empty(), y_given = !s.y_strides.empty();
  if ((x_given && s.x_strides.size() != static_cast<size_t>(2 + nsp)) ||
      (w_given && s.w_strides.size() != static_cast<size_t>(2 + nsp)) ||
      (y_given && s.y_strides.size() != static_cast<size_t>(2 + nsp)))
    return nullptr;
  for (int i = 0; x_given && i < 2 + nsp; ++i) x_str[i] = s.x_strides[i];
  for (int i = 0; y_given && i < 2 + nsp; ++i) y_str[i] = s.y_strides[i];
  if (w_given) {
    // [O, C/G, K...] strides; with groups O splits into [G, O/G], the
    // group index the major part.
    int k = 0;
    if (s.groups > 1) w_str[k++] = s.w_strides[0] * (s.out_features / s.groups);
    for (int i = 0; i < 2 + nsp; ++i) w_str[k++] = s.w_strides[i];
  }
  dnnl_memory_desc_t src_any, w_any, dst_any;
  if (!plain(&impl->src_plain, 2 + nsp, src_dims, type, x_str, x_given) ||
      !plain(&impl->weights_plain, w_nd, w_dims, type, w_str, w_given) ||
      !plain(&impl->dst_plain, 2 + nsp, dst_dims, result, y_str, y_given) ||
      a.memory_desc_init_by_tag(&src_any, 2 + nsp, src_dims, type, dnnl_format_tag_any) != dnnl_success ||
      a.memory_desc_init_by_tag(&w_any, w_nd, w_dims, type, dnnl_format_tag_any) != dnnl_success ||
      a.memory_desc_init_by_tag(&dst_any, 2 + nsp, dst_dims, result, dnnl_format_tag_any) != dnnl_success)
    return nullptr;
  // The primitive for (src, dst) layouts, weights in oneDNN's choice; null
  // unless it is one of oneDNN's fast kernels. `jit_only` also turns away
  // its im2col + GEMM fallback (a reorder to a blocked layout beats it).
  auto make = [&](const dnnl_memory_desc_t& src, const dnnl_memory_desc_t& dst, bool jit_only) {
    dnnl_convolution_desc_t desc;
    if (a.dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &src,
                                                &w_any, nullptr, &dst, strides, dilates, pad_l,
                                                pad_r) != dnnl_success)
      return static_cast<dnnl_primitive_desc_t>(nullptr);
    dnnl_primitive_attr_t attr = UserScratchpad(a);
    dnnl_primitive_desc_t pd = nullptr;
    const bool created = attr != nullptr &&
                         a.primitive_desc_create(&pd, &desc, attr, a.engine, nullptr) == dnnl_success;
    if (attr != nullptr) a.primitive_attr_destroy(attr);
    if (!created) return static_cast<dnnl_primitive_desc_t>(nullptr);
    const char* name = nullptr;
    a.primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name);
    const bool fast = FastKernel(s.operand_type, name) &&
                      (!jit_only || std::string_view(name).find("gemm") == std::string_view::npos);
    if (!fast) {
      a.primitive_desc_destroy(pd);
      return static_cast<dnnl_primitive_desc_t>(nullptr);
    }
    return pd;
  };
  // Activations where they lie first: big ones cost more to reorder than
  // the convolution itself takes.
  dnnl_primitive_desc_t pd = make(impl->src_plain, impl->dst_plain, true);
  if (pd == nullptr) pd = make(src_any, dst_any, false);
  if (pd == nullptr) return nullptr;
  impl->src = *a.primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  impl->weights = *a.primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  impl->dst = *a.primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  bool ok = Instantiate(a, pd, &impl->conv);
  a.primitive_desc_destroy(pd);
  if (!ok || !MakeReorder(a, impl->src_plain, impl->src, &impl->src_reorder) ||
      !MakeReorder(a, impl->weights_plain, impl->weights, &impl->weights_reorder) ||
      !MakeReorder(a, impl->dst, impl->dst_plain, &impl->dst_reorder))
    return nullptr;
  if (impl->src_reorder.primitive != nullptr) impl->src_buf.resize(a.memory_desc_get_size(&impl->src));
  if (impl->weights_reorder.primitive != nullptr) {
    const size_t bytes = a.memory_desc_get_size(&impl->weights);
    impl->weights_buf.resize(bytes);
    impl->weights_copy = BlockedCopy::Plan(impl->weights_plain, impl->weights, s.operand_type == hlo::ElementType::kBF16 ? 2 : 4, bytes);
  }
  if (impl->dst_reorder.primitive != nullptr) impl->dst_buf.resize(a.memory_desc_get_size(&impl->dst));
  size_t scratch = 0;
  for (const Primitive* p : {&impl->conv, &impl->src_reorder, &impl->weights_reorder, &impl->dst_reorder})
    scratch = std::max(scratch, p->scratchpad_bytes);
  impl->scratchpad.resize(scratch);
  return std::unique_ptr<DnnlConvolution>(new DnnlConvolution(std::move(impl)));
}

bool DnnlConvolution::ActivationsInPlace() const {
  return impl_->src_reorder.primitive == nullptr && impl_->dst_reorder.primitive == nullptr;
}

bool DnnlConvolution::ReordersWeights() const {
  return impl_->weights_copy.has_value() || impl_->weights_reorder.primitive != nullptr;
}

bool DnnlConvolution::Run(const void* x, const void* w, void* y, uint64_t w_version) {
  Impl& m = *impl_;
  const int threads = GemmThreads();
  // One step: `p` from (desc, data) to (desc, data); a missing reorder
  // means the layouts match and the data is used as it is.
  auto reorder = [&](const Primitive& p, const dnnl_memory_desc_t& from_md, const void* from,
                     const dnnl_memory_desc_t& to_md, void* to) {
    const DnnlArg args[3] = {{DNNL_ARG_FROM, &from_md, from},
                             {DNNL_ARG_TO, &to_md, to},
                             {DNNL_ARG_SCRATCHPAD, &p.scratchpad, m.scratchpad.data()}};
    return DnnlExecute(p.primitive, args, p.scratchpad_bytes > 0 ? 3 : 2, threads);
  };
  const void* src = x;
  if (m.src_reorder.primitive != nullptr) {
    if (!reorder(m.src_reorder, m.src_plain, x, m.src, m.src_buf.data())) return false;
    src = m.src_buf.data();
  }
  const void* weights = w;
  const bool reordered = m.weights_copy || m.weights_reorder.primitive != nullptr;
  const bool unchanged = w_version != 0 && w_version == m.seen_version && w == m.seen_from;
  if (reordered && unchanged && m.kept_valid) {
    weights = m.kept.get();  // unchanged since it was reordered and kept
  } else if (reordered) {
    // Weights seen unchanged since the last call are frozen, most likely
    // (inference): their reorder goes to memory of the kernel's own and is
    // kept. Others (a train step's, new every step) go to the step's
    // scratch, which other steps reuse, so nothing of them is kept.
    if (unchanged && m.kept == nullptr) m.kept = AllocateAlignedBytes(m.weights_buf.size());
    uint8_t* to = unchanged ? m.kept.get() : m.weights_buf.data();
    m.kept_valid = false;  // until the reorder below is complete
    if (m.weights_copy) {
      m.weights_copy->Run(w, to, threads);
    } else if (!reorder(m.weights_reorder, m.weights_plain, w, m.weights, to)) {
      return false;
    }
    weights = to;
    m.kept_valid = unchanged;
  }
  m.seen_from = w;
  m.seen_version = w_version;
  void* dst = m.dst_reorder.primitive != nullptr ? static_cast<void*>(m.dst_buf.data()) : y;
  const DnnlArg args[4] = {{DNNL_ARG_SRC, &m.src, src},
                           {DNNL_ARG_WEIGHTS, &m.weights, weights},
                           {DNNL_ARG_DST, &m.dst, dst},
                           {DNNL_ARG_SCRATCHPAD, &m.conv.scratchpad, m.scratchpad.data()}};
  if (!DnnlExecute(m.conv.primitive, args, m.conv.scratchpad_bytes > 0 ? 4 : 3, threads)) return false;
  if (m.dst_reorder.primitive != nullptr && !reorder(m.dst_reorder, m.dst, dst, m.dst_plain, y)) return false;
  return true;
}

}  // namespace neuron::kernels
