#include "lib/plot/colors.h"

#include "lib/plot/plplot_library.h"
namespace neuron::plot {

void InstallPalette() {
  // Background, ink, guides, then the "tableau 10" series colors.
  static const PLINT r[] = {255, 0, 200, 31, 214, 44, 255, 148, 140, 227, 23, 127, 188};
  static const PLINT g[] = {255, 0, 200, 119, 39, 160, 127, 103, 86, 119, 190, 127, 189};
  static const PLINT b[] = {255, 0, 200, 180, 40, 44, 14, 189, 75, 194, 207, 127, 34};
  static_assert(sizeof(r) / sizeof(r[0]) == kFirstSeries + kSeriesColors);
  Pl().plscmap0(r, g, b, kFirstSeries + kSeriesColors);
}

int SeriesColor(int k) { return kFirstSeries + (k % kSeriesColors); }

}  // namespace neuron::plot
