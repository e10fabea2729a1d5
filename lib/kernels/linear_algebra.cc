#include "lib/kernels/linear_algebra.h"

#include <cmath>
#include <limits>
#include <vector>

#include "lib/kernels/element_convert.h"

namespace neuron::kernels {

void Cholesky(const Buf& a, bool lower, Buf& out) {
  const int64_t n = a.rank() ? a.dims.back() : 1;
  const int64_t mats = n ? a.count / (n * n) : 0;
  std::vector<double> m(n * n), l(n * n);
  for (int64_t b = 0; b < mats; ++b) {
    const int64_t base = b * n * n;
    // Read the triangle the result uses, as a lower-triangular problem.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        m[i * n + j] = LoadDouble(a.type, a.data, base + (lower ? i * n + j : j * n + i));
    std::fill(l.begin(), l.end(), 0.0);
    bool ok = true;
    for (int64_t j = 0; j < n && ok; ++j) {
      double d = m[j * n + j];
      for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
      if (!(d > 0)) { ok = false; break; }
      l[j * n + j] = std::sqrt(d);
      for (int64_t i = j + 1; i < n; ++i) {
        double s = m[i * n + j];
        for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
        l[i * n + j] = s / l[j * n + j];
      }
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double v = ok ? l[i * n + j] : std::numeric_limits<double>::quiet_NaN();
        StoreDouble(out.type, out.data, base + (lower ? i * n + j : j * n + i), v);
      }
  }
}

void TriangularSolve(const Buf& a, const Buf& b, const TriangularSolveOptions& o, Buf& out) {
  const int64_t n = a.dims.back();
  const int64_t rows = b.dims[b.rank() - 2], cols = b.dims.back();
  const int64_t mats = n ? a.count / (n * n) : 0;
  std::vector<double> A(n * n), B(rows * cols);
  for (int64_t m = 0; m < mats; ++m) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        bool keep = o.lower ? j <= i : j >= i;
        double v = keep ? LoadDouble(a.type, a.data, m * n * n + i * n + j) : 0.0;
        if (o.unit_diagonal && i == j) v = 1;
        A[i * n + j] = v;
      }
    if (o.transpose_a != "NO_TRANSPOSE")
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < n; ++j) std::swap(A[i * n + j], A[j * n + i]);
    bool eff_lower = o.lower != (o.transpose_a != "NO_TRANSPOSE");
    for (int64_t i = 0; i < rows * cols; ++i) B[i] = LoadDouble(b.type, b.data, m * rows * cols + i);
    if (o.left_side) {
      // A X = B, X is n x cols; solve column by column.
      for (int64_t c = 0; c < cols; ++c) {
        if (eff_lower) {
          for (int64_t i = 0; i < n; ++i) {
            double s = B[i * cols + c];
            for (int64_t k = 0; k < i; ++k) s -= A[i * n + k] * B[k * cols + c];
            B[i * cols + c] = s / A[i * n + i];
          }
        } else {
          for (int64_t i = n - 1; i >= 0; --i) {
            double s = B[i * cols + c];
            for (int64_t k = i + 1; k < n; ++k) s -= A[i * n + k] * B[k * cols + c];
            B[i * cols + c] = s / A[i * n + i];
          }
        }
      }
    } else {
      // X A = B, X is rows x n; per row, solve A^T x^T = b^T.
      for (int64_t r = 0; r < rows; ++r) {
        double* x = &B[r * cols];
        if (eff_lower) {  // A^T is upper: back substitution over columns of A
          for (int64_t j = n - 1; j >= 0; --j) {
            double s = x[j];
            for (int64_t k = j + 1; k < n; ++k) s -= x[k] * A[k * n + j];
            x[j] = s / A[j * n + j];
          }
        } else {
          for (int64_t j = 0; j < n; ++j) {
            double s = x[j];
            for (int64_t k = 0; k < j; ++k) s -= x[k] * A[k * n + j];
            x[j] = s / A[j * n + j];
          }
        }
      }
    }
    for (int64_t i = 0; i < rows * cols; ++i) StoreDouble(out.type, out.data, m * rows * cols + i, B[i]);
  }
}

}  // namespace neuron::kernels
