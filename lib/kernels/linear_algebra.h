// cholesky and triangular-solve over the two minor dimensions (batched
// over the rest), computed in double (complex<double> for c64/c128, where
// cholesky factors a Hermitian matrix, A = L L^H, and ADJOINT conjugates).
// A matrix that is not positive definite yields NaN everywhere, as the
// reference evaluator does.
#ifndef NEURON_LIB_KERNELS_LINEAR_ALGEBRA_H_
#define NEURON_LIB_KERNELS_LINEAR_ALGEBRA_H_

#include <string>

#include "lib/kernels/buffer.h"

namespace neuron::kernels {

void Cholesky(const Buf& a, bool lower, Buf& out);

struct TriangularSolveOptions {
  bool left_side = false, lower = false, unit_diagonal = false;
  std::string transpose_a = "NO_TRANSPOSE";  // or TRANSPOSE / ADJOINT
};
// Solves op(a) x = b (left side) or x op(a) = b.
void TriangularSolve(const Buf& a, const Buf& b, const TriangularSolveOptions& o, Buf& out);

}  // namespace neuron::kernels

#endif  // NEURON_LIB_KERNELS_LINEAR_ALGEBRA_H_
