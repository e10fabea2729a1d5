// PLplot, loaded when the first picture is drawn (dlopen) rather than
// linked: its dozen shared objects (freetype, qhull, png, ...) cost about
// half a millisecond of every start of a tool that links it, plotting or
// not, and a tool that never plots then runs without PLplot installed.
// Call its functions as Pl().plinit(...): plplot.h's macros turn plinit into
// c_plinit, the name of the field.
#ifndef NEURON_LIB_PLOT_PLPLOT_LIBRARY_H_
#define NEURON_LIB_PLOT_PLPLOT_LIBRARY_H_

#include <plplot.h>

#include "absl/status/statusor.h"

namespace neuron::plot {

// The functions lib/plot calls, by their symbol names.
#define NEURON_PLPLOT_FUNCTIONS(X)                                                              \
  X(c_pladv) X(c_plbox) X(c_plcol0) X(c_plend) X(c_plinit) X(c_pljoin) X(c_pllegend)          \
  X(c_pllsty) X(c_plline) X(c_plmtex) X(c_plptex) X(c_plschr) X(c_plscmap0) X(c_plsdev)       \
  X(c_plspage) X(c_plstring) X(c_plvpor) X(c_plwidth) X(c_plwind) X(plgDevs) X(plsabort)      \
  X(plsexit) X(plsfile)

struct PlplotLibrary {
#define NEURON_PLPLOT_FIELD(name) decltype(&::name) name = nullptr;
  NEURON_PLPLOT_FUNCTIONS(NEURON_PLPLOT_FIELD)
#undef NEURON_PLPLOT_FIELD
};

// Loads PLplot (libplplot.so.17, Debian's libplplot17) once; the error
// says why it cannot be used.
absl::StatusOr<const PlplotLibrary*> LoadPlplot();

// The library LoadPlplot loaded; only after it succeeded.
const PlplotLibrary& Pl();

}  // namespace neuron::plot

#endif  // NEURON_LIB_PLOT_PLPLOT_LIBRARY_H_
