#include "lib/kernels/fft.h"

#include <cmath>
#include <complex>

#include "lib/kernels/element_convert.h"

namespace neuron::kernels {
namespace {

using Z = std::complex<double>;

// In-place DFT of every line along `axis` of a row-major array.
void DftAxis(std::vector<Z>& a, const std::vector<int64_t>& dims, size_t axis, bool inverse) {
  const int64_t n = dims[axis];
  int64_t stride = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) stride *= dims[d];
  const int64_t total = static_cast<int64_t>(a.size());
  if (n == 0 || total == 0) return;
  const int64_t outer = total / (n * stride);
  std::vector<Z> line(n), res(n);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < stride; ++s) {
      int64_t base = o * n * stride + s;
      for (int64_t k = 0; k < n; ++k) line[k] = a[base + k * stride];
      for (int64_t k = 0; k < n; ++k) {
        Z acc = 0;
        for (int64_t t = 0; t < n; ++t) {
          double ang = sign * 2 * M_PI * static_cast<double>((k * t) % n) / n;
          acc += line[t] * Z(std::cos(ang), std::sin(ang));
        }
        res[k] = inverse ? acc / static_cast<double>(n) : acc;
      }
      for (int64_t k = 0; k < n; ++k) a[base + k * stride] = res[k];
    }
}

Z LoadZ(const Buf& b, int64_t i) { return LoadComplex(b.type, b.data, i); }
void StoreZ(Buf& b, int64_t i, Z z) { StoreComplex(b.type, b.data, i, z); }

}  // namespace

void Fft(const Buf& in, const std::string& type, const std::vector<int64_t>& len, Buf& out) {
  const size_t rank = in.dims.size();
  const size_t first = rank - len.size();
  if (type == "IRFFT") {
    // Rebuild the full Hermitian last axis (length len.back()), inverse
    // transform the other axes, then the last one, keep the real part.
    std::vector<int64_t> full = in.dims;
    const int64_t half = in.dims.back(), n = len.back();
    full.back() = n;
    std::vector<Z> a(static_cast<size_t>(out.count));
    const int64_t rows = half ? in.count / half : 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < n; ++k)
        a[r * n + k] = k < half ? LoadZ(in, r * half + k) : Z(0);
    for (size_t ax = first; ax + 1 < rank; ++ax) DftAxis(a, full, ax, true);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = half; k < n; ++k) a[r * n + k] = std::conj(a[r * n + (n - k) % n]);
    for (int64_t r = 0; r < rows; ++r)  // imaginary parts of DC/Nyquist do not count
      a[r * n] = Z(a[r * n].real(), 0);
    DftAxis(a, full, rank - 1, true);
    for (int64_t i = 0; i < out.count; ++i) StoreZ(out, i, Z(a[i].real(), 0));
    return;
  }
  std::vector<Z> a(static_cast<size_t>(in.count));
  for (int64_t i = 0; i < in.count; ++i) a[i] = LoadZ(in, i);
  const bool inverse = type == "IFFT";
  for (size_t ax = first; ax < rank; ++ax) DftAxis(a, in.dims, ax, inverse);
  if (type == "RFFT") {
    const int64_t n = in.dims.back(), keep = out.dims.back();
    const int64_t rows = n ? in.count / n : 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < keep; ++k) StoreZ(out, r * keep + k, a[r * n + k]);
    return;
  }
  for (int64_t i = 0; i < out.count; ++i) StoreZ(out, i, a[i]);
}

}  // namespace neuron::kernels
