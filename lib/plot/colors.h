// The palette every picture uses: PLplot's color map 0 replaced by a white
// background, black ink, grey guides and ten series colors that stay
// distinguishable for common color-vision deficiencies.
#ifndef NEURON_LIB_PLOT_COLORS_H_
#define NEURON_LIB_PLOT_COLORS_H_

namespace neuron::plot {

enum Color : int { kBackground = 0, kInk = 1, kGuide = 2, kFirstSeries = 3 };
constexpr int kSeriesColors = 10;

// Installs the palette (before plinit: index 0 is the page background).
void InstallPalette();

// The color index of series k (cycling through the ten).
int SeriesColor(int k);

}  // namespace neuron::plot

#endif  // NEURON_LIB_PLOT_COLORS_H_
