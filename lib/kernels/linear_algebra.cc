#include "lib/kernels/linear_algebra.h"

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "lib/hlo/shape.h"
#include "lib/kernels/element_convert.h"

namespace neuron::kernels {
namespace {

using Z = std::complex<double>;

// Real matrices compute in double, complex ones in complex<double>; one
// algorithm for both, where conjugation is the identity on reals.
double Conj(double x) { return x; }
Z Conj(Z x) { return std::conj(x); }
double NaNOf(double) { return std::numeric_limits<double>::quiet_NaN(); }
Z NaNOf(Z) { return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()}; }

template <typename T>
T Load(const Buf& b, int64_t i) {
  if constexpr (std::is_same_v<T, double>) return LoadDouble(b.type, b.data, i);
  else return LoadComplex(b.type, b.data, i);
}
template <typename T>
void Store(Buf& b, int64_t i, T v) {
  if constexpr (std::is_same_v<T, double>) StoreDouble(b.type, b.data, i, v);
  else StoreComplex(b.type, b.data, i, v);
}

// A = L L^H for the lower triangle (upper: A = U^H U with U = L^H, read
// as the conjugate transpose so that one lower-triangular loop serves).
template <typename T>
void CholeskyIn(const Buf& a, bool lower, Buf& out) {
  const int64_t n = a.rank() ? a.dims.back() : 1;
  const int64_t mats = n ? a.count / (n * n) : 0;
  std::vector<T> m(n * n), l(n * n);
  for (int64_t b = 0; b < mats; ++b) {
    const int64_t base = b * n * n;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        m[i * n + j] = lower ? Load<T>(a, base + i * n + j) : Conj(Load<T>(a, base + j * n + i));
    std::fill(l.begin(), l.end(), T(0));
    bool ok = true;
    for (int64_t j = 0; j < n && ok; ++j) {
      // The diagonal of a Hermitian matrix is real; its imaginary part is
      // not read.
      double d = std::real(m[j * n + j]);
      for (int64_t k = 0; k < j; ++k) d -= std::norm(l[j * n + k]);
      if (!(d > 0)) { ok = false; break; }
      l[j * n + j] = std::sqrt(d);
      for (int64_t i = j + 1; i < n; ++i) {
        T s = m[i * n + j];
        for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * Conj(l[j * n + k]);
        l[i * n + j] = s / l[j * n + j];
      }
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T v = ok ? l[i * n + j] : NaNOf(T());
        if (lower) Store<T>(out, base + i * n + j, v);
        else Store<T>(out, base + j * n + i, Conj(v));
      }
  }
}

template <typename T>
void TriangularSolveIn(const Buf& a, const Buf& b, const TriangularSolveOptions& o, Buf& out) {
  const int64_t n = a.dims.back();
  const int64_t rows = b.dims[b.rank() - 2], cols = b.dims.back();
  const int64_t mats = n ? a.count / (n * n) : 0;
  const bool transposed = o.transpose_a != "NO_TRANSPOSE";
  const bool adjoint = o.transpose_a == "ADJOINT";
  std::vector<T> A(n * n), B(rows * cols);
  for (int64_t m = 0; m < mats; ++m) {
    // A holds op(a): the used triangle, the unit diagonal, then the
    // transpose (conjugated for ADJOINT).
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        bool keep = o.lower ? j <= i : j >= i;
        T v = keep ? Load<T>(a, m * n * n + i * n + j) : T(0);
        if (o.unit_diagonal && i == j) v = 1;
        A[i * n + j] = adjoint ? Conj(v) : v;
      }
    if (transposed)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i + 1; j < n; ++j) std::swap(A[i * n + j], A[j * n + i]);
    const bool eff_lower = o.lower != transposed;
    for (int64_t i = 0; i < rows * cols; ++i) B[i] = Load<T>(b, m * rows * cols + i);
    if (o.left_side) {
      // A X = B, X is n x cols; solve column by column.
      for (int64_t c = 0; c < cols; ++c) {
        if (eff_lower) {
          for (int64_t i = 0; i < n; ++i) {
            T s = B[i * cols + c];
            for (int64_t k = 0; k < i; ++k) s -= A[i * n + k] * B[k * cols + c];
            B[i * cols + c] = s / A[i * n + i];
          }
        } else {
          for (int64_t i = n - 1; i >= 0; --i) {
            T s = B[i * cols + c];
            for (int64_t k = i + 1; k < n; ++k) s -= A[i * n + k] * B[k * cols + c];
            B[i * cols + c] = s / A[i * n + i];
          }
        }
      }
    } else {
      // X A = B, X is rows x n; per row, solve A^T x^T = b^T.
      for (int64_t r = 0; r < rows; ++r) {
        T* x = &B[r * cols];
        if (eff_lower) {  // A^T is upper: back substitution over columns of A
          for (int64_t j = n - 1; j >= 0; --j) {
            T s = x[j];
            for (int64_t k = j + 1; k < n; ++k) s -= x[k] * A[k * n + j];
            x[j] = s / A[j * n + j];
          }
        } else {
          for (int64_t j = 0; j < n; ++j) {
            T s = x[j];
            for (int64_t k = 0; k < j; ++k) s -= x[k] * A[k * n + j];
            x[j] = s / A[j * n + j];
          }
        }
      }
    }
    for (int64_t i = 0; i < rows * cols; ++i) Store<T>(out, m * rows * cols + i, B[i]);
  }
}

}  // namespace

void Cholesky(const Buf& a, bool lower, Buf& out) {
  if (hlo::IsComplex(a.type)) CholeskyIn<Z>(a, lower, out);
  else CholeskyIn<double>(a, lower, out);
}

void TriangularSolve(const Buf& a, const Buf& b, const TriangularSolveOptions& o, Buf& out) {
  if (hlo::IsComplex(a.type)) TriangularSolveIn<Z>(a, b, o, out);
  else TriangularSolveIn<double>(a, b, o, out);
}

}  // namespace neuron::kernels
