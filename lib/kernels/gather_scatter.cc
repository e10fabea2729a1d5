#include "lib/kernels/gather_scatter.h"

#include <algorithm>
#include <cstring>

#include "lib/kernels/data_movement.h"
#include "lib/kernels/element_convert.h"

namespace neuron::kernels {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void Unflatten(int64_t i, const std::vector<int64_t>& dims, std::vector<int64_t>& idx) {
  idx.resize(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    idx[d] = dims[d] ? i % dims[d] : 0;
    i = dims[d] ? i / dims[d] : 0;
  }
}

// Reads the index vector for batch position `bpos` (indices dims without
// index_vector_dim, in order).
void IndexVector(const Buf& indices, int64_t ivd, const std::vector<int64_t>& bpos,
                 int64_t count, std::vector<int64_t>& out) {
  std::vector<int64_t> strides = RowMajorStrides(indices.dims);
  int64_t base = 0;
  size_t b = 0;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d == ivd) continue;
    base += bpos[b++] * strides[d];
  }
  out.resize(count);
  int64_t step = ivd < indices.rank() ? strides[ivd] : 0;
  for (int64_t i = 0; i < count; ++i) out[i] = LoadInt(indices.type, indices.data, base + i * step);
}

}  // namespace

void Gather(const Buf& operand, const Buf& indices, const hlo::GatherDims& g,
            const std::vector<int64_t>& slice_sizes, Buf& out) {
  const int es = out.elem_size;
  int64_t r = operand.rank();
  std::vector<int64_t> op_strides = RowMajorStrides(operand.dims);
  // Output batch dims = out dims not in offset_dims; they index the
  // indices dims other than index_vector_dim, in order.
  std::vector<int64_t> batch_out_dims;
  for (int64_t d = 0; d < out.rank(); ++d)
    if (!Contains(g.offset_dims, d)) batch_out_dims.push_back(d);
  // Operand dims that appear as offset dims, in order.
  std::vector<int64_t> offset_operand_dims;
  for (int64_t d = 0; d < r; ++d)
    if (!Contains(g.collapsed_slice_dims, d) && !Contains(g.operand_batching_dims, d))
      offset_operand_dims.push_back(d);
  // Non-index-vector dims of the indices.
  std::vector<int64_t> idx_batch_dims;
  for (int64_t d = 0; d < indices.rank(); ++d)
    if (d != g.index_vector_dim) idx_batch_dims.push_back(d);
  int64_t ivlen = g.index_vector_dim < indices.rank() ? indices.dims[g.index_vector_dim] : 1;
  // Where the output's last dim is the slices' run along the operand's
  // last dim, a whole run is one copy (an embedding lookup's rows, element
  // by element, took a quarter of a millisecond for 11 tokens).
  int64_t run = 1;
  if (out.rank() > 0 && r > 0 && !g.offset_dims.empty() && !offset_operand_dims.empty() &&
      g.offset_dims.size() == offset_operand_dims.size() && g.offset_dims.back() == out.rank() - 1 &&
      offset_operand_dims.back() == r - 1) {
    run = std::max<int64_t>(out.dims.back(), 1);
  }
  std::vector<int64_t> oidx, bpos(batch_out_dims.size()), iv, start(r);
  std::vector<int64_t> last_bpos;
  for (int64_t o = 0; o < out.count; o += run) {
    Unflatten(o, out.dims, oidx);
    for (size_t i = 0; i < batch_out_dims.size(); ++i) bpos[i] = oidx[batch_out_dims[i]];
    if (bpos != last_bpos || o == 0) {
      IndexVector(indices, g.index_vector_dim, bpos, ivlen, iv);
      std::fill(start.begin(), start.end(), 0);
      for (size_t k = 0; k < g.start_index_map.size() && k < iv.size(); ++k) {
        int64_t d = g.start_index_map[k];
        start[d] = std::clamp<int64_t>(iv[k], 0, std::max<int64_t>(0, operand.dims[d] - slice_sizes[d]));
      }
      for (size_t k = 0; k < g.operand_batching_dims.size(); ++k) {
        int64_t id = g.start_indices_batching_dims[k];
        size_t pos = std::find(idx_batch_dims.begin(), idx_batch_dims.end(), id) - idx_batch_dims.begin();
        start[g.operand_batching_dims[k]] = pos < bpos.size() ? bpos[pos] : 0;
      }
      last_bpos = bpos;
    }
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) off += start[d] * op_strides[d];
    for (size_t k = 0; k < offset_operand_dims.size() && k < g.offset_dims.size(); ++k)
      off += oidx[g.offset_dims[k]] * op_strides[offset_operand_dims[k]];
    std::memcpy(out.data + o * es, operand.data + off * es, static_cast<size_t>(run * es));
  }
}

absl::StatusOr<std::unique_ptr<ScatterKernel>> ScatterKernel::Plan(const hlo::Instruction& instr) {
  auto k = std::unique_ptr<ScatterKernel>(new ScatterKernel());
  if (!instr.attrs().scatter) return absl::InvalidArgumentError("scatter without dimension numbers");
  k->dims_ = *instr.attrs().scatter;
  k->n_ = static_cast<int>((instr.operand_count() - 1) / 2);
  absl::StatusOr<ScalarFn> fn = ScalarFn::Compile(*instr.to_apply());
  if (!fn.ok()) return fn.status();
  k->fn_ = std::make_unique<ScalarFn>(std::move(*fn));
  if (k->n_ == 1) {
    k->fast_op_ = hlo::IsComplex(instr.shape().IsTuple() ? instr.shape().tuple[0].type : instr.shape().type)
                      ? hlo::Opcode::kUnknown : k->fn_->simple_binary_op();
    const hlo::Instruction* root = instr.to_apply()->root();
    k->overwrite_ = root->opcode() == hlo::Opcode::kParameter && root->attrs().parameter_number == 1;
  }
  return k;
}

void ScatterKernel::Run(const std::vector<const Buf*>& ins, const std::vector<Buf*>& outs) {
  const hlo::ScatterDims& s = dims_;
  for (int i = 0; i < n_; ++i)
    if (outs[i]->data != ins[i]->data) std::memcpy(outs[i]->data, ins[i]->data, outs[i]->bytes);
  const Buf& indices = *ins[n_];
  const Buf& upd0 = *ins[n_ + 1];
  const Buf& op0 = *ins[0];
  int64_t r = op0.rank();
  std::vector<int64_t> op_strides = RowMajorStrides(op0.dims);
  std::vector<int64_t> scatter_upd_dims;  // update dims that are not window dims
  for (int64_t d = 0; d < upd0.rank(); ++d)
    if (!Contains(s.update_window_dims, d)) scatter_upd_dims.push_back(d);
  std::vector<int64_t> window_operand_dims;  // operand dims covered by window dims
  for (int64_t d = 0; d < r; ++d)
    if (!Contains(s.inserted_window_dims, d) && !Contains(s.input_batching_dims, d))
      window_operand_dims.push_back(d);
  std::vector<int64_t> idx_batch_dims;
  for (int64_t d = 0; d < indices.rank(); ++d)
    if (d != s.index_vector_dim) idx_batch_dims.push_back(d);
  // Window size per operand dim.
  std::vector<int64_t> wsize(r, 1);
  for (size_t k = 0; k < window_operand_dims.size() && k < s.update_window_dims.size(); ++k)
    wsize[window_operand_dims[k]] = upd0.dims[s.update_window_dims[k]];
  int64_t ivlen = s.index_vector_dim < indices.rank() ? indices.dims[s.index_vector_dim] : 1;
  std::vector<int64_t> uidx, bpos(scatter_upd_dims.size()), iv, start(r), last;
  bool skip = false;
  std::vector<uint64_t> params(2 * n_), res(n_);
  for (int64_t u = 0; u < upd0.count; ++u) {
    Unflatten(u, upd0.dims, uidx);
    for (size_t i = 0; i < scatter_upd_dims.size(); ++i) bpos[i] = uidx[scatter_upd_dims[i]];
    if (u == 0 || bpos != last) {
      IndexVector(indices, s.index_vector_dim, bpos, ivlen, iv);
      std::fill(start.begin(), start.end(), 0);
      for (size_t k = 0; k < s.scatter_dims_to_operand_dims.size() && k < iv.size(); ++k)
        start[s.scatter_dims_to_operand_dims[k]] = iv[k];
      for (size_t k = 0; k < s.input_batching_dims.size(); ++k) {
        int64_t id = s.scatter_indices_batching_dims[k];
        size_t pos = std::find(idx_batch_dims.begin(), idx_batch_dims.end(), id) - idx_batch_dims.begin();
        start[s.input_batching_dims[k]] = pos < bpos.size() ? bpos[pos] : 0;
      }
      skip = false;
      for (int64_t d = 0; d < r; ++d)
        if (start[d] < 0 || start[d] + wsize[d] > op0.dims[d]) skip = true;
      last = bpos;
    }
    if (skip) continue;
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) off += start[d] * op_strides[d];
    for (size_t k = 0; k < window_operand_dims.size() && k < s.update_window_dims.size(); ++k)
      off += uidx[s.update_window_dims[k]] * op_strides[window_operand_dims[k]];
    if (overwrite_) {
      Buf& o = *outs[0];
      std::memcpy(o.data + off * o.elem_size, ins[n_ + 1]->data + u * o.elem_size, o.elem_size);
      continue;
    }
    if (fast_op_ == hlo::Opcode::kAdd) {
      Buf& o = *outs[0];
      const Buf& up = *ins[n_ + 1];
      if (DomainOf(o.type) == Domain::kI64)
        StoreInt(o.type, o.data, off, LoadInt(o.type, o.data, off) + LoadInt(up.type, up.data, u));
      else
        StoreDouble(o.type, o.data, off, LoadDouble(o.type, o.data, off) + LoadDouble(up.type, up.data, u));
      continue;
    }
    for (int i = 0; i < n_; ++i) {
      params[i] = LoadSlot(outs[i]->type, outs[i]->data, off);
      params[n_ + i] = LoadSlot(ins[n_ + 1 + i]->type, ins[n_ + 1 + i]->data, u);
    }
    fn_->EvalScalar(params.data(), res.data());
    for (int i = 0; i < n_; ++i) StoreSlot(outs[i]->type, outs[i]->data, off, res[i]);
  }
}

}  // namespace neuron::kernels
