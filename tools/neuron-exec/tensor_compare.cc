#include "tools/neuron-exec/tensor_compare.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/literal_io/literal_text.h"

namespace neuron::exec_tool {

using literal_io::FormatTensorType;

Comparison CompareTensors(const hlo::Literal& got, const hlo::Literal& expected,
                          const Tolerance& tolerance) {
  Comparison c;
  if (got.shape().dims != expected.shape().dims) {
    c.ok = false;
    c.error = absl::StrFormat("shape %s differs from the expected %s",
                              FormatTensorType(got.shape()), FormatTensorType(expected.shape()));
    return c;
  }
  const int64_t n = got.element_count();
  double worst_excess = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double g = got.GetDouble(i), e = expected.GetDouble(i);
    bool match;
    double excess;  // how far past the tolerance, for ranking
    if (std::isnan(e) || std::isnan(g)) {
      match = std::isnan(e) && std::isnan(g);
      excess = match ? 0 : INFINITY;
    } else if (std::isinf(e) || std::isinf(g)) {
      match = g == e;
      excess = match ? 0 : INFINITY;
    } else {
      const double diff = std::fabs(g - e);
      const double allowed = tolerance.atol + tolerance.rtol * std::fabs(e);
      match = diff <= allowed;
      excess = diff - allowed;
    }
    if (!match) {
      ++c.mismatches;
      if (excess > worst_excess) {
        worst_excess = excess;
        c.worst_index = i;
        c.got = g;
        c.expected = e;
      }
    }
  }
  if (c.mismatches == 0) return c;
  c.ok = false;
  int64_t rest = c.worst_index;
  c.worst_coords.assign(got.shape().dims.size(), 0);
  for (int d = static_cast<int>(got.shape().dims.size()) - 1; d >= 0; --d) {
    const int64_t dim = got.shape().dims[d];
    c.worst_coords[d] = dim ? rest % dim : 0;
    rest = dim ? rest / dim : 0;
  }
  c.error = absl::StrFormat(
      "%d of %d elements differ; worst at [%s]: got %.9g, expected %.9g (|diff| %.3g > atol %g + "
      "rtol %g * |expected|)",
      c.mismatches, n, absl::StrJoin(c.worst_coords, ","), c.got, c.expected,
      std::fabs(c.got - c.expected), tolerance.atol, tolerance.rtol);
  return c;
}

}  // namespace neuron::exec_tool
