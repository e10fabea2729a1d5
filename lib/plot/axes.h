// What the pictures share: axes that fit their data (linear, logarithmic,
// or byte sizes in powers of two), framed panels with grids and labels,
// series drawn as lines with markers, and legends. All draw with PLplot
// inside RenderSvg (svg_render.h).
#ifndef NEURON_LIB_PLOT_AXES_H_
#define NEURON_LIB_PLOT_AXES_H_

#include <string>
#include <string_view>
#include <vector>

namespace neuron::plot {

// One axis in data units. On a log axis PLplot's world coordinate is
// log10 of the value, and values <= 0 cannot be shown.
enum class Ticks {
  kPlplot,      // PLplot's own: decades on a log axis, round steps on a linear one
  kBytes,       // powers of two, labelled "1 KiB" (a log axis)
  kOneTwoFive,  // 1, 2, 5, 10, 20, ... (a log axis shorter than whole decades)
};

struct Axis {
  double lo = 1, hi = 10;
  bool log = false;
  Ticks ticks = Ticks::kPlplot;
  double Map(double v) const;
  bool Shows(double v) const { return !log || v > 0; }
};

// Whole decades around the positive values (1 to 10 when there are none).
Axis LogAxisFor(const std::vector<double>& values);
// From the smallest to the largest value, 5% padding on each side.
Axis LinearAxisFor(const std::vector<double>& values);
// A log axis just around the positive values (10% margins), for data that
// span less than the whole decades LogAxisFor would give them.
Axis TightLogAxisFor(const std::vector<double>& values);
// Byte sizes: a log axis from the power of two at or below the smallest to
// the one at or above the largest (at least one doubling either side of a
// single size).
Axis ByteAxisFor(const std::vector<double>& values);

// A panel: its viewport in normalized page coordinates (0..1 each way).
struct Panel {
  double x0, x1, y0, y1;
};

// Sets the panel's viewport and window, draws its frame, grid, ticks and
// labels (text in PLplot's text syntax: see PlotText), and leaves ink color.
void DrawPanel(const Panel& panel, const Axis& x, const Axis& y, std::string_view x_label,
               std::string_view y_label, std::string_view title);

// A title across the top of the page.
void DrawPageTitle(std::string_view title);

// How a series looks: its color index (colors.h), PLplot line style (1
// solid, 2 dashed, ...) and marker glyph.
struct SeriesStyle {
  int color = 0;
  int line_style = 1;
  std::string marker;
};
// Series k: the k-th color and marker; `dashed` for compared runs.
SeriesStyle StyleFor(int k, bool dashed);

// Draws the points the axes can show: joined by a line, a marker at each,
// or both.
void DrawSeries(const Axis& x, const Axis& y, const std::vector<double>& xs,
                const std::vector<double>& ys, const SeriesStyle& style, bool line,
                bool markers);

struct LegendEntry {
  std::string text;  // PlotText'ed by DrawLegend
  SeriesStyle style;
};
// The legend goes in an area of its own below the panels: inside a panel
// it would hide data wherever the data happen to be, and PLplot sizes a
// legend box from its own font metrics, narrower than the SVG's text.
double LegendHeight(size_t entries);  // normalized page height
void DrawLegend(const std::vector<LegendEntry>& entries, const Panel& area);

// Text as PLplot shows it literally: its escape character '#' doubled.
std::string PlotText(std::string_view text);

}  // namespace neuron::plot

#endif  // NEURON_LIB_PLOT_AXES_H_
