// One SVG picture drawn with PLplot (its "svg" device), rendered into
// memory so the caller writes the file whole or not at all
// (lib/support/atomic_file.h). PLplot keeps global state: one picture at a
// time, from one thread.
#ifndef NEURON_LIB_PLOT_SVG_RENDER_H_
#define NEURON_LIB_PLOT_SVG_RENDER_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace neuron::plot {

// The page in points; the SVG declares the same size in pt, and 750 x 600
// pt is 1000 x 800 CSS pixels.
struct PageSize {
  int width_pt = 750;
  int height_pt = 600;
};

// Who draws what, for errors: "<what>: cannot draw the picture: ...", on
// a line "<tool>: error: ..." when PLplot gives up.
struct Drawer {
  std::string tool;  // "neuron-exec"
  std::string what;  // "--plot 'latency.svg'"
};

// Runs `draw` (PLplot calls) on a fresh page with the shared palette
// (colors.h) and returns the SVG document. PLplot's messages never reach
// the tool's stdout or stderr. A PLplot error that would end the process
// (no device drivers found, say) prints one "<tool>: error: ..." line and
// exits with status 1 instead, as PLplot cannot be resumed after one.
absl::StatusOr<std::string> RenderSvg(const Drawer& drawer, PageSize size,
                                      const std::function<void()>& draw);

// Writes the SVG to `path` whole or not at all.
absl::Status WriteSvg(const std::string& path, std::string_view svg);

}  // namespace neuron::plot

#endif  // NEURON_LIB_PLOT_SVG_RENDER_H_
