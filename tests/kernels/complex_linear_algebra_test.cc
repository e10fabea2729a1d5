// Complex cholesky and triangular-solve against their definitions: the
// factor must rebuild the Hermitian input (A = L L^H, or U^H U), and the
// solution must satisfy op(A) X = B (or X op(A) = B) for every option.
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/kernels/element_convert.h"
#include "tests/kernels/kernel_test_util.h"

namespace neuron::kernels::testing {
namespace {

using ET = hlo::ElementType;
using Z = std::complex<double>;
using Matrix = std::vector<Z>;  // row-major n x n (or rows x cols)

Tensor ComplexTensor(ET type, std::vector<int64_t> dims, const Matrix& v) {
  Tensor t(type, std::move(dims));
  for (int64_t i = 0; i < t.element_count(); ++i) StoreComplex(type, t.data(), i, v[i]);
  return t;
}

Matrix ComplexValues(const Tensor& t) {
  Matrix v(t.element_count());
  for (int64_t i = 0; i < t.element_count(); ++i) v[i] = LoadComplex(t.type(), t.data(), i);
  return v;
}

Matrix RandomMatrix(int64_t rows, int64_t cols, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Matrix m(rows * cols);
  for (Z& z : m) z = {u(rng), u(rng)};
  return m;
}

// p x q times q x r.
Matrix Product(const Matrix& a, const Matrix& b, int64_t p, int64_t q, int64_t r) {
  Matrix c(p * r);
  for (int64_t i = 0; i < p; ++i)
    for (int64_t j = 0; j < r; ++j)
      for (int64_t k = 0; k < q; ++k) c[i * r + j] += a[i * q + k] * b[k * r + j];
  return c;
}

Matrix Adjoint(const Matrix& a, int64_t n) {
  Matrix t(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) t[j * n + i] = std::conj(a[i * n + j]);
  return t;
}

double MaxDiff(const Matrix& a, const Matrix& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

const char* TypeName(ET t) { return t == ET::kC64 ? "c64" : "c128"; }
double Tolerance(ET t) { return t == ET::kC64 ? 1e-4 : 1e-10; }

class ComplexLinearAlgebraTest : public ::testing::TestWithParam<ET> {};

TEST_P(ComplexLinearAlgebraTest, CholeskyRebuildsTheHermitianMatrix) {
  const ET type = GetParam();
  const int64_t n = 5;
  std::mt19937 rng(7);
  // M M^H + n I is Hermitian positive definite.
  Matrix m = RandomMatrix(n, n, rng);
  Matrix a = Product(m, Adjoint(m, n), n, n, n);
  for (int64_t i = 0; i < n; ++i) a[i * n + i] += static_cast<double>(n);
  for (bool lower : {true, false}) {
    SCOPED_TRACE(lower ? "lower" : "upper");
    const std::string t = absl::StrCat(TypeName(type), "[5,5]");
    auto r = RunText(absl::StrCat("HloModule m\nENTRY e {\n  a = ", t, " parameter(0)\n  ROOT c = ", t,
                                  " cholesky(a), lower=", lower ? "true" : "false", "\n}\n"),
                     {ComplexTensor(type, {n, n}, a)});
    ASSERT_TRUE(r.ok()) << r.status();
    Matrix f = ComplexValues((*r)[0]);
    // Only the requested triangle is defined; the rest is not read.
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (lower ? j > i : j < i) f[i * n + j] = 0;
    Matrix rebuilt = lower ? Product(f, Adjoint(f, n), n, n, n) : Product(Adjoint(f, n), f, n, n, n);
    EXPECT_LT(MaxDiff(rebuilt, a), Tolerance(type) * n * n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_GT(f[i * n + i].real(), 0);
      EXPECT_NEAR(f[i * n + i].imag(), 0, Tolerance(type));
    }
  }
}

TEST_P(ComplexLinearAlgebraTest, TriangularSolveSatisfiesItsEquationForEveryOption) {
  const ET type = GetParam();
  const int64_t n = 4, other = 3;
  std::mt19937 rng(11);
  for (bool left_side : {true, false})
    for (bool lower : {true, false})
      for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"})
        for (bool unit : {false, true}) {
          SCOPED_TRACE(absl::StrCat("left_side=", left_side, " lower=", lower, " ", transpose, " unit=", unit));
          // Every element is set: the solve must read only its triangle
          // (and not the diagonal when it is a unit one).
          Matrix a = RandomMatrix(n, n, rng);
          for (int64_t i = 0; i < n; ++i) a[i * n + i] += Z(3, 1);
          const int64_t rows = left_side ? n : other, cols = left_side ? other : n;
          Matrix b = RandomMatrix(rows, cols, rng);
          const std::string ta = absl::StrCat(TypeName(type), "[", n, ",", n, "]");
          const std::string tb = absl::StrCat(TypeName(type), "[", rows, ",", cols, "]");
          auto r = RunText(absl::StrCat("HloModule m\nENTRY e {\n  a = ", ta, " parameter(0)\n  b = ", tb,
                                        " parameter(1)\n  ROOT x = ", tb, " triangular-solve(a, b), left_side=",
                                        left_side ? "true" : "false", ", lower=", lower ? "true" : "false",
                                        ", unit_diagonal=", unit ? "true" : "false", ", transpose_a=", transpose,
                                        "\n}\n"),
                           {ComplexTensor(type, {n, n}, a), ComplexTensor(type, {rows, cols}, b)});
          ASSERT_TRUE(r.ok()) << r.status();
          Matrix x = ComplexValues((*r)[0]);
          // op(A) from the definition: the triangle, the diagonal, then
          // transpose or conjugate transpose.
          Matrix tri(n * n);
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
              if (i == j) tri[i * n + j] = unit ? Z(1) : a[i * n + j];
              else if (lower ? j < i : j > i) tri[i * n + j] = a[i * n + j];
          Matrix op = tri;
          if (std::string(transpose) != "NO_TRANSPOSE") {
            op = Adjoint(tri, n);
            if (std::string(transpose) == "TRANSPOSE")
              for (Z& z : op) z = std::conj(z);
          }
          Matrix got = left_side ? Product(op, x, n, n, cols) : Product(x, op, rows, n, n);
          EXPECT_LT(MaxDiff(got, b), Tolerance(type) * 10);
        }
}

TEST(ComplexLinearAlgebraRefusalTest, MixingComplexAndRealIsRefused) {
  auto exe = BuildText("HloModule m\nENTRY e {\n  a = c64[2,2] parameter(0)\n  b = f32[2,2] parameter(1)\n"
                       "  ROOT x = f32[2,2] triangular-solve(a, b), left_side=true, lower=true, "
                       "transpose_a=NO_TRANSPOSE\n}\n");
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(std::string(exe.status().message()).find("mixing complex and real"), std::string::npos) << exe.status();
}

INSTANTIATE_TEST_SUITE_P(Types, ComplexLinearAlgebraTest, ::testing::Values(ET::kC64, ET::kC128),
                         [](const auto& info) { return std::string(TypeName(info.param)); });

}  // namespace
}  // namespace neuron::kernels::testing
