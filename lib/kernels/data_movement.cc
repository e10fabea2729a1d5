#include "lib/kernels/data_movement.h"

#include <algorithm>
#include <cstring>

#include "lib/kernels/element_convert.h"
#include "lib/kernels/thread_pool.h"

namespace neuron::kernels {
namespace {

// Transposes writing this much or more split over the threads.
constexpr int64_t kParallelTransposeBytes = int64_t{4} << 20;

// Calls fn(out_offset, in_offset) per row of `inner` contiguous elements
// over a box of `dims`, with per-dim strides for both sides (elements).
template <typename F>
void ForEachRow(const std::vector<int64_t>& dims, const std::vector<int64_t>& out_strides,
                const std::vector<int64_t>& in_strides, int64_t out_base, int64_t in_base,
                F&& fn) {
  int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) { fn(out_base, in_base); return; }
  for (int64_t d : dims) if (d == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t o = out_base, in = in_base;
  while (true) {
    fn(o, in);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < dims[d]) { o += out_strides[d]; in += in_strides[d]; break; }
      o -= out_strides[d] * (dims[d] - 1);
      in -= in_strides[d] * (dims[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

void CopyElems(uint8_t* dst, const uint8_t* src, int64_t n, int es) {
  std::memcpy(dst, src, n * es);
}

}  // namespace

int64_t ScalarIndex(const Buf& b, int64_t i) { return LoadInt(b.type, b.data, i); }

void Broadcast(const Buf& in, const std::vector<int64_t>& dims, Buf& out) {
  const int es = out.elem_size;
  if (in.count == 1) {
    for (int64_t i = 0; i < out.count; ++i) std::memcpy(out.data + i * es, in.data, es);
    return;
  }
  std::vector<int64_t> in_strides_by_out(out.rank(), 0);
  std::vector<int64_t> in_strides = RowMajorStrides(in.dims);
  for (size_t i = 0; i < dims.size(); ++i) in_strides_by_out[dims[i]] = in_strides[i];
  std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
  // Innermost output dims that map 1:1 and contiguously form a row copy.
  std::vector<int64_t> box = out.dims;
  int64_t inner = 1;
  int64_t r = out.rank();
  if (r > 0 && in_strides_by_out[r - 1] == 1) {
    inner = out.dims[r - 1];
    box[r - 1] = 1;
  }
  if (inner > 1) {
    ForEachRow(box, out_strides, in_strides_by_out, 0, 0, [&](int64_t o, int64_t i) {
      CopyElems(out.data + o * es, in.data + i * es, inner, es);
    });
    return;
  }
  // Innermost dim broadcast: fill rows with one value.
  if (r > 0) {
    int64_t rowlen = out.dims[r - 1];
    box[r - 1] = 1;
    ForEachRow(box, out_strides, in_strides_by_out, 0, 0, [&](int64_t o, int64_t i) {
      const uint8_t* v = in.data + i * es;
      uint8_t* dst = out.data + o * es;
      if (es == 4) { uint32_t x; std::memcpy(&x, v, 4); std::fill_n(reinterpret_cast<uint32_t*>(dst), rowlen, x); }
      else for (int64_t k = 0; k < rowlen; ++k) std::memcpy(dst + k * es, v, es);
    });
  }
}

void Transpose(const Buf& in, const std::vector<int64_t>& perm, Buf& out) {
  const int es = out.elem_size;
  int64_t r = out.rank();
  std::vector<int64_t> in_strides = RowMajorStrides(in.dims);
  std::vector<int64_t> src_by_out(r);
  for (int64_t i = 0; i < r; ++i) src_by_out[i] = in_strides[perm[i]];
  std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
  if (r == 0 || out.count == 0) { std::memcpy(out.data, in.data, out.bytes); return; }
  if (src_by_out[r - 1] == 1) {
    std::vector<int64_t> box = out.dims;
    int64_t inner = box[r - 1];
    box[r - 1] = 1;
    ForEachRow(box, out_strides, src_by_out, 0, 0, [&](int64_t o, int64_t i) {
      CopyElems(out.data + o * es, in.data + i * es, inner, es);
    });
    return;
  }
  // Blocked 2-D tiles over the output's last dim and the output dim that
  // reads input-contiguously, so reads and writes both stay in cache.
  int64_t a = -1;  // output dim whose source stride is 1
  for (int64_t i = 0; i < r; ++i) if (src_by_out[i] == 1) a = i;
  if (a < 0) {
    std::vector<int64_t> box = out.dims;
    ForEachRow(box, out_strides, src_by_out, 0, 0, [&](int64_t o, int64_t i) {
      std::memcpy(out.data + o * es, in.data + i * es, es);
    });
    return;
  }
  const int64_t B = 32;
  int64_t na = out.dims[a], nl = out.dims[r - 1];
  std::vector<int64_t> box = out.dims;
  box[a] = 1;
  box[r - 1] = 1;
  // A large [a, last] plane splits its tiles along dim a over the threads
  // (each writes its own elements): a weight matrix's kept transpose, 555 MB
  // for gemma3 1B, took 2.0 s on one thread with its pages' first touch, 1.1
  // on two.
  const int64_t bands = (na + B - 1) / B;
  const int parts = na * nl * es >= kParallelTransposeBytes
                        ? static_cast<int>(std::min<int64_t>(ThreadPool::Global().max_parallelism(), bands))
                        : 1;
  auto tiles = [&](int64_t o, int64_t i, int64_t band0, int64_t band1) {
    for (int64_t a0 = band0 * B; a0 < std::min(na, band1 * B); a0 += B)
      for (int64_t l0 = 0; l0 < nl; l0 += B) {
        int64_t a1 = std::min(na, a0 + B), l1 = std::min(nl, l0 + B);
        for (int64_t x = a0; x < a1; ++x)
          for (int64_t y = l0; y < l1; ++y) {
            int64_t oo = o + x * out_strides[a] + y;
            int64_t ii = i + x + y * src_by_out[r - 1];
            if (es == 4) reinterpret_cast<uint32_t*>(out.data)[oo] = reinterpret_cast<const uint32_t*>(in.data)[ii];
            else if (es == 2) reinterpret_cast<uint16_t*>(out.data)[oo] = reinterpret_cast<const uint16_t*>(in.data)[ii];
            else std::memcpy(out.data + oo * es, in.data + ii * es, es);
          }
      }
  };
  ForEachRow(box, out_strides, src_by_out, 0, 0, [&](int64_t o, int64_t i) {
    if (parts < 2) {
      tiles(o, i, 0, bands);
      return;
    }
    ThreadPool::Global().Run(parts, [&](int p) { tiles(o, i, bands * p / parts, bands * (p + 1) / parts); });
  });
}

void CopyBox(const Buf& in, const std::vector<int64_t>& start, Buf& out) {
  const int es = out.elem_size;
  std::vector<int64_t> in_strides = RowMajorStrides(in.dims);
  std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
  int64_t base = 0;
  for (size_t d = 0; d < start.size(); ++d) base += start[d] * in_strides[d];
  int64_t r = out.rank();
  if (r == 0) { std::memcpy(out.data, in.data + base * es, es); return; }
  std::vector<int64_t> box = out.dims;
  int64_t inner = box[r - 1];
  box[r - 1] = 1;
  ForEachRow(box, out_strides, in_strides, 0, base, [&](int64_t o, int64_t i) {
    CopyElems(out.data + o * es, in.data + i * es, inner, es);
  });
}

void Slice(const Buf& in, const std::vector<hlo::SliceDim>& slice, Buf& out) {
  const int es = out.elem_size;
  std::vector<int64_t> in_strides = RowMajorStrides(in.dims);
  std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
  int64_t r = out.rank();
  int64_t base = 0;
  std::vector<int64_t> src(r);
  for (int64_t d = 0; d < r; ++d) {
    base += slice[d].start * in_strides[d];
    src[d] = in_strides[d] * slice[d].stride;
  }
  if (r == 0) { std::memcpy(out.data, in.data, es); return; }
  if (slice[r - 1].stride == 1) {
    std::vector<int64_t> box = out.dims;
    int64_t inner = box[r - 1];
    box[r - 1] = 1;
    ForEachRow(box, out_strides, src, 0, base, [&](int64_t o, int64_t i) {
      CopyElems(out.data + o * es, in.data + i * es, inner, es);
    });
    return;
  }
  ForEachRow(out.dims, out_strides, src, 0, base, [&](int64_t o, int64_t i) {
    std::memcpy(out.data + o * es, in.data + i * es, es);
  });
}

static std::vector<int64_t> ClampedStarts(const std::vector<const Buf*>& starts,
                                          const std::vector<int64_t>& full,
                                          const std::vector<int64_t>& part) {
  std::vector<int64_t> s(full.size(), 0);
  for (size_t d = 0; d < full.size() && d < starts.size(); ++d) {
    int64_t v = ScalarIndex(*starts[d]);
    int64_t hi = full[d] - part[d];
    s[d] = std::clamp<int64_t>(v, 0, std::max<int64_t>(hi, 0));
  }
  return s;
}

void DynamicSlice(const Buf& in, const std::vector<const Buf*>& starts, Buf& out) {
  if (out.count == 0) return;
  CopyBox(in, ClampedStarts(starts, in.dims, out.dims), out);
}

void DynamicUpdateSlice(const Buf& operand, const Buf& update,
                        const std::vector<const Buf*>& starts, Buf& out) {
  if (out.data != operand.data) std::memcpy(out.data, operand.data, out.bytes);
  if (update.count == 0) return;
  std::vector<int64_t> s = ClampedStarts(starts, operand.dims, update.dims);
  const int es = out.elem_size;
  std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
  std::vector<int64_t> up_strides = RowMajorStrides(update.dims);
  int64_t base = 0;
  for (size_t d = 0; d < s.size(); ++d) base += s[d] * out_strides[d];
  int64_t r = update.rank();
  if (r == 0) { std::memcpy(out.data + base * es, update.data, es); return; }
  std::vector<int64_t> box = update.dims;
  int64_t inner = box[r - 1];
  box[r - 1] = 1;
  ForEachRow(box, out_strides, up_strides, base, 0, [&](int64_t o, int64_t i) {
    CopyElems(out.data + o * es, update.data + i * es, inner, es);
  });
}

void Concatenate(const std::vector<const Buf*>& ins, int64_t dim, Buf& out) {
  const int es = out.elem_size;
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= out.dims[d];
  int64_t inner_out = out.count / std::max<int64_t>(outer, 1);
  int64_t offset = 0;
  for (const Buf* in : ins) {
    int64_t inner_in = outer ? in->count / outer : 0;
    for (int64_t o = 0; o < outer; ++o)
      CopyElems(out.data + (o * inner_out + offset) * es, in->data + o * inner_in * es,
                inner_in, es);
    offset += inner_in;
  }
}

namespace {

// Fills n elements of es bytes with one value, a word at a time.
void FillElems(uint8_t* dst, const uint8_t* value, int64_t n, int es) {
  auto fill = [&](auto word) {
    std::memcpy(&word, value, sizeof(word));
    std::fill_n(reinterpret_cast<decltype(word)*>(dst), n, word);
  };
  switch (es) {
    case 1: std::memset(dst, *value, n); return;
    case 2: fill(uint16_t{}); return;
    case 4: fill(uint32_t{}); return;
    case 8: fill(uint64_t{}); return;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es, value, es);
  }
}

}  // namespace

// The output filled with the padding value, then each input row (the
// innermost dim) copied to where it lands: one memcpy per row when the
// innermost dim has no interior padding. Negative padding crops.
void Pad(const Buf& in, const Buf& value, const std::vector<hlo::PaddingDim>& pad, Buf& out) {
  const int es = out.elem_size;
  FillElems(out.data, value.data, out.count, es);
  if (in.count == 0) return;
  const int64_t r = in.rank();
  if (r == 0) {
    std::memcpy(out.data, in.data, es);
    return;
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(out.dims);
  // Input elements [first, last) of a row land inside the output row, at
  // low + i * step.
  const hlo::PaddingDim& inner = pad[r - 1];
  const int64_t step = inner.interior + 1, row = in.dims[r - 1], out_row = out.dims[r - 1];
  int64_t first = 0, last = row;
  if (inner.low < 0) first = (-inner.low + step - 1) / step;
  while (last > first && inner.low + (last - 1) * step >= out_row) --last;
  if (first >= last) return;
  std::vector<int64_t> idx(r - 1, 0);
  for (int64_t i = 0; i < in.count; i += row) {
    int64_t o = 0;
    bool inside = true;
    for (int64_t d = 0; d + 1 < r; ++d) {
      const int64_t p = pad[d].low + idx[d] * (pad[d].interior + 1);
      if (p < 0 || p >= out.dims[d]) {
        inside = false;
        break;
      }
      o += p * out_strides[d];
    }
    if (inside) {
      uint8_t* dst = out.data + (o + inner.low + first * step) * es;
      const uint8_t* src = in.data + (i + first) * es;
      if (step == 1) {
        std::memcpy(dst, src, (last - first) * es);
      } else {
        for (int64_t k = first; k < last; ++k, dst += step * es, src += es) std::memcpy(dst, src, es);
      }
    }
    for (int64_t d = r - 2; d >= 0; --d) {
      if (++idx[d] < in.dims[d]) break;
      idx[d] = 0;
    }
  }
}

void Reverse(const Buf& in, const std::vector<int64_t>& dims, Buf& out) {
  const int es = out.elem_size;
  int64_t r = in.rank();
  std::vector<int64_t> strides = RowMajorStrides(in.dims);
  std::vector<int64_t> src = strides;
  int64_t base = 0;
  for (int64_t d : dims) {
    base += (in.dims[d] - 1) * strides[d];
    src[d] = -strides[d];
  }
  if (out.count == 0) return;
  if (r == 0) { std::memcpy(out.data, in.data, es); return; }
  ForEachRow(out.dims, strides, src, 0, base, [&](int64_t o, int64_t i) {
    std::memcpy(out.data + o * es, in.data + i * es, es);
  });
}

void Iota(int64_t dimension, Buf& out) {
  std::vector<int64_t> strides = RowMajorStrides(out.dims);
  int64_t stride = out.rank() ? strides[dimension] : 1;
  int64_t dim = out.rank() ? out.dims[dimension] : 1;
  for (int64_t i = 0; i < out.count; ++i) {
    int64_t v = (i / stride) % dim;
    if (DomainOf(out.type) == Domain::kI64) StoreInt(out.type, out.data, i, v);
    else StoreDouble(out.type, out.data, i, static_cast<double>(v));
  }
}

}  // namespace neuron::kernels
