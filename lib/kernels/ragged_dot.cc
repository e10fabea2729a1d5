#include "lib/kernels/ragged_dot.h"

#include <algorithm>
#include <vector>

#include "lib/hlo/ragged_dot_dims.h"
#include "lib/kernels/element_convert.h"
#include "lib/kernels/gemm.h"

namespace neuron::kernels {
namespace {

using hlo::RaggedDotMode;

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The dimensions of a rank-`rank` operand in none of the lists, in order.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<std::vector<int64_t>>& taken) {
  std::vector<int64_t> free;
  for (int64_t i = 0; i < rank; ++i)
    if (std::none_of(taken.begin(), taken.end(), [&](const auto& t) { return Contains(t, i); })) free.push_back(i);
  return free;
}

// Every index over `dims` of `b`, row-major in the list's order: its
// element offset in b, and (when wanted) its coordinate along each dim.
struct Walk {
  std::vector<int64_t> offsets;
  std::vector<std::vector<int64_t>> coords;  // [index][position in dims]
};
Walk WalkDims(const Buf& b, const std::vector<int64_t>& dims, bool with_coords) {
  const std::vector<int64_t> strides = RowMajorStrides(b.dims);
  int64_t count = 1;
  for (int64_t d : dims) count *= b.dims[d];
  Walk w;
  w.offsets.resize(count);
  if (with_coords) w.coords.resize(count);
  std::vector<int64_t> c(dims.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t off = 0;
    for (size_t j = 0; j < dims.size(); ++j) off += c[j] * strides[dims[j]];
    w.offsets[i] = off;
    if (with_coords) w.coords[i] = c;
    for (int64_t j = static_cast<int64_t>(dims.size()) - 1; j >= 0; --j) {
      if (++c[j] < b.dims[dims[j]]) break;
      c[j] = 0;
    }
  }
  return w;
}

// Which group an lhs position falls in, from its coordinates: the row of
// group_sizes its prefix dimensions pick, then the consecutive runs.
class GroupFinder {
 public:
  GroupFinder(const Buf& group_sizes, std::vector<int64_t> prefix, int64_t ragged_extent)
      : prefix_(std::move(prefix)) {
    groups_ = group_sizes.dims.back();
    broadcast_ = group_sizes.rank() == 1;
    sizes_.resize(group_sizes.count);
    // A negative size is an empty group; one past the ragged dimension
    // covers the rest of it (so the running sums cannot overflow).
    for (int64_t i = 0; i < group_sizes.count; ++i)
      sizes_[i] = std::clamp<int64_t>(LoadInt(group_sizes.type, group_sizes.data, i), 0, ragged_extent);
    prefix_extent_.assign(prefix_.size(), 0);
  }
  void SetExtents(const std::vector<int64_t>& lhs_dims) {
    for (size_t i = 0; i < prefix_.size(); ++i) prefix_extent_[i] = lhs_dims[prefix_[i]];
  }
  // lhs_coord: the full lhs coordinate. -1 past the last group.
  int64_t Find(const std::vector<int64_t>& lhs_coord, int64_t ragged) const {
    int64_t row = 0;
    if (!broadcast_)
      for (size_t i = 0; i < prefix_.size(); ++i) row = row * prefix_extent_[i] + lhs_coord[prefix_[i]];
    int64_t end = 0;
    for (int64_t g = 0; g < groups_; ++g) {
      end += sizes_[row * groups_ + g];
      if (lhs_coord[ragged] < end) return g;
    }
    return -1;
  }
  int64_t groups() const { return groups_; }

 private:
  std::vector<int64_t> prefix_, prefix_extent_, sizes_;
  int64_t groups_ = 0;
  bool broadcast_ = true;
};

// The full lhs coordinate from the coordinates of the dimension lists.
void Scatter(const std::vector<int64_t>& dims, const std::vector<int64_t>& coord, std::vector<int64_t>& full) {
  for (size_t i = 0; i < dims.size(); ++i) full[dims[i]] = coord[i];
}

}  // namespace

void RaggedDot(const Buf& lhs, const Buf& rhs, const Buf& group_sizes, const hlo::DotDims& d, Buf& out) {
  const RaggedDotMode mode = hlo::RaggedDotModeOf(d);
  const int64_t ragged = d.lhs_ragged.front();
  const std::vector<int64_t> lhs_free = FreeDims(lhs.rank(), {d.lhs_batch, d.lhs_contracting});
  const std::vector<int64_t> rhs_free = FreeDims(rhs.rank(), {d.rhs_batch, d.rhs_contracting, d.rhs_group});
  const Walk lb = WalkDims(lhs, d.lhs_batch, true), lf = WalkDims(lhs, lhs_free, true),
             lc = WalkDims(lhs, d.lhs_contracting, true);
  const Walk rb = WalkDims(rhs, d.rhs_batch, false), rf = WalkDims(rhs, rhs_free, false),
             rc = WalkDims(rhs, d.rhs_contracting, false);
  const int64_t B = lb.offsets.size(), M = lf.offsets.size(), K = lc.offsets.size(), N = rf.offsets.size();
  const int64_t group_stride = d.rhs_group.empty() ? 0 : RowMajorStrides(rhs.dims)[d.rhs_group[0]];
  GroupFinder finder(group_sizes, hlo::RaggedDotGroupPrefix(d, lhs.rank()), lhs.dims[ragged]);
  finder.SetExtents(lhs.dims);

  std::vector<double> lhs_v(lhs.count), rhs_v(rhs.count);
  for (int64_t i = 0; i < lhs.count; ++i) lhs_v[i] = LoadDouble(lhs.type, lhs.data, i);
  for (int64_t i = 0; i < rhs.count; ++i) rhs_v[i] = LoadDouble(rhs.type, rhs.data, i);
  // Ragged contracting: one [B,M,N] slice per group, each summing only the
  // contracting positions of its group. Otherwise one slice.
  const int64_t groups = mode == RaggedDotMode::kBatch ? 1 : finder.groups();
  const int64_t slices = mode == RaggedDotMode::kContracting ? groups : 1;
  std::vector<double> acc(slices * B * M * N, 0.0);
  std::vector<int64_t> coord(lhs.rank(), 0);
  // Per batch index and group: the rows (non-contracting mode) or the
  // contracting positions (contracting mode) in the group, packed into
  // dense matrices for one GEMM.
  std::vector<std::vector<int64_t>> members(groups);
  std::vector<double> a, bm, c;
  for (int64_t b = 0; b < B; ++b) {
    Scatter(d.lhs_batch, lb.coords[b], coord);
    for (auto& list : members) list.clear();
    if (mode == RaggedDotMode::kNonContracting) {
      for (int64_t m = 0; m < M; ++m) {
        Scatter(lhs_free, lf.coords[m], coord);
        if (int64_t g = finder.Find(coord, ragged); g >= 0) members[g].push_back(m);  // else: zero
      }
    } else if (mode == RaggedDotMode::kContracting) {
      for (int64_t k = 0; k < K; ++k) {
        Scatter(d.lhs_contracting, lc.coords[k], coord);
        if (int64_t g = finder.Find(coord, ragged); g >= 0) members[g].push_back(k);
      }
    }
    for (int64_t g = 0; g < groups; ++g) {
      const bool by_rows = mode == RaggedDotMode::kNonContracting;
      const std::vector<int64_t>* rows = by_rows ? &members[g] : nullptr;
      const std::vector<int64_t>* ks = mode == RaggedDotMode::kContracting ? &members[g] : nullptr;
      const int64_t mm = rows ? static_cast<int64_t>(rows->size()) : M;
      const int64_t kk = ks ? static_cast<int64_t>(ks->size()) : K;
      if (mm == 0 || kk == 0 || N == 0) continue;
      a.resize(mm * kk);
      bm.resize(kk * N);
      c.resize(mm * N);
      for (int64_t i = 0; i < mm; ++i)
        for (int64_t j = 0; j < kk; ++j)
          a[i * kk + j] = lhs_v[lb.offsets[b] + lf.offsets[rows ? (*rows)[i] : i] + lc.offsets[ks ? (*ks)[j] : j]];
      const int64_t rhs_base = rb.offsets[b] + (by_rows ? g * group_stride : 0);
      for (int64_t j = 0; j < kk; ++j)
        for (int64_t n = 0; n < N; ++n) bm[j * N + n] = rhs_v[rhs_base + rc.offsets[ks ? (*ks)[j] : j] + rf.offsets[n]];
      Dgemm(false, false, mm, N, kk, a.data(), kk, bm.data(), N, c.data(), N);
      double* slice = &acc[((mode == RaggedDotMode::kContracting ? g : 0) * B + b) * M * N];
      for (int64_t i = 0; i < mm; ++i)
        std::copy(&c[i * N], &c[(i + 1) * N], slice + (rows ? (*rows)[i] : i) * N);
    }
  }
  for (int64_t i = 0; i < out.count; ++i) StoreDouble(out.type, out.data, i, acc[i]);
}

}  // namespace neuron::kernels
