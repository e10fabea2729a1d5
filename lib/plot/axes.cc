#include "lib/plot/axes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "lib/plot/colors.h"
#include "lib/plot/plplot_library.h"
#include "lib/support/parse.h"

namespace neuron::plot {
namespace {

constexpr double kTextScale = 0.9;  // of PLplot's default character height

void MinMax(const std::vector<double>& values, bool positive_only, double* lo, double* hi) {
  *lo = HUGE_VAL;
  *hi = -HUGE_VAL;
  for (double v : values) {
    if (!std::isfinite(v) || (positive_only && v <= 0)) continue;
    *lo = std::min(*lo, v);
    *hi = std::max(*hi, v);
  }
}

struct Tick {
  double value;
  bool major;
};

// Byte-size ticks: every power of two, labelled every `step`-th doubling
// so that at most eight labels show, on exponents that are multiples of the
// step (so 1 KiB, 1 MiB and 1 GiB are among them whenever it divides 10).
std::vector<Tick> ByteTicks(const Axis& x) {
  const int first = static_cast<int>(std::ceil(std::log2(x.lo) - 1e-9));
  const int last = static_cast<int>(std::floor(std::log2(x.hi) + 1e-9));
  int step = 1;
  for (int s : {1, 2, 5, 10, 20}) {
    step = s;
    if ((last - first) / s + 1 <= 8) break;
  }
  std::vector<Tick> ticks;
  for (int e = std::max(first, 0); e <= last; ++e) ticks.push_back({std::exp2(e), e % step == 0});
  return ticks;
}

// 1-2-5 ticks in each decade; on a short axis with fewer than three of
// those, every digit is labelled.
std::vector<Tick> OneTwoFiveTicks(const Axis& x) {
  std::vector<Tick> ticks;
  int labelled = 0;
  const int first = static_cast<int>(std::floor(std::log10(x.lo)));
  const int last = static_cast<int>(std::ceil(std::log10(x.hi)));
  for (int d = first; d <= last; ++d) {
    for (int m = 1; m <= 9; ++m) {
      const double v = m * std::pow(10.0, d);
      if (v < x.lo * (1 - 1e-9) || v > x.hi * (1 + 1e-9)) continue;
      const bool major = m == 1 || m == 2 || m == 5;
      labelled += major;
      ticks.push_back({v, major});
    }
  }
  if (labelled < 3) {
    for (Tick& t : ticks) t.major = true;
  }
  return ticks;
}

std::string TickLabel(const Axis& x, double v) {
  if (x.ticks == Ticks::kBytes) return FormatBytes(static_cast<uint64_t>(std::llround(v)));
  return absl::StrFormat("%g", v);
}

// Ticks PLplot cannot place itself, along the bottom and top of the panel,
// labelled below and with grid lines at the labelled ones.
void DrawCustomTicks(const Axis& x, double y_lo, double y_hi) {
  const std::vector<Tick> ticks = x.ticks == Ticks::kBytes ? ByteTicks(x) : OneTwoFiveTicks(x);
  const double tick = (y_hi - y_lo) * 0.015;
  const double w_lo = x.Map(x.lo), w_hi = x.Map(x.hi);
  for (const Tick& t : ticks) {
    const double wx = x.Map(t.value);
    if (t.major) {
      Pl().plcol0(kGuide);
      Pl().pllsty(1);
      Pl().plwidth(0.5);
      Pl().pljoin(wx, y_lo, wx, y_hi);
    }
    Pl().plcol0(kInk);
    Pl().plwidth(1);
    Pl().pljoin(wx, y_lo, wx, y_lo + (t.major ? 2 : 1) * tick);
    Pl().pljoin(wx, y_hi, wx, y_hi - (t.major ? 2 : 1) * tick);
    if (t.major) {
      const double at = (wx - w_lo) / (w_hi - w_lo);
      Pl().plmtex("b", 1.6, at, 0.5, PlotText(TickLabel(x, t.value)).c_str());
    }
  }
}

}  // namespace

double Axis::Map(double v) const { return log ? std::log10(v) : v; }

Axis LogAxisFor(const std::vector<double>& values) {
  double lo, hi;
  MinMax(values, true, &lo, &hi);
  Axis a;
  a.log = true;
  if (lo > hi) return a;
  a.lo = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
  a.hi = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
  if (a.hi <= a.lo) a.hi = a.lo * 10;
  return a;
}

Axis LinearAxisFor(const std::vector<double>& values) {
  double lo, hi;
  MinMax(values, false, &lo, &hi);
  Axis a;
  if (lo > hi) return Axis{0, 1, false, Ticks::kPlplot};
  const double pad = hi > lo ? (hi - lo) * 0.05 : std::max(std::fabs(lo) * 0.05, 1e-9);
  a.lo = lo - pad;
  a.hi = hi + pad;
  return a;
}

Axis TightLogAxisFor(const std::vector<double>& values) {
  double lo, hi;
  MinMax(values, true, &lo, &hi);
  Axis a;
  a.log = true;
  a.ticks = Ticks::kOneTwoFive;
  if (lo > hi) return a;
  a.lo = lo / 1.1;
  a.hi = hi * 1.1;
  return a;
}

Axis ByteAxisFor(const std::vector<double>& values) {
  double lo, hi;
  MinMax(values, true, &lo, &hi);
  Axis a;
  a.log = true;
  a.ticks = Ticks::kBytes;
  if (lo > hi) lo = hi = 1024;
  a.lo = std::exp2(std::floor(std::log2(lo) + 1e-9));
  a.hi = std::exp2(std::ceil(std::log2(hi) - 1e-9));
  if (a.hi <= a.lo) {
    a.lo = std::max(1.0, a.lo / 2);
    a.hi *= 2;
  }
  return a;
}

void DrawPanel(const Panel& panel, const Axis& x, const Axis& y, std::string_view x_label,
               std::string_view y_label, std::string_view title) {
  Pl().plschr(0, kTextScale);
  Pl().plvpor(panel.x0, panel.x1, panel.y0, panel.y1);
  const double wy0 = y.Map(y.lo), wy1 = y.Map(y.hi);
  Pl().plwind(x.Map(x.lo), x.Map(x.hi), wy0, wy1);
  // Grid first, in a light grey, so the frame and data draw over it.
  Pl().plcol0(kGuide);
  Pl().plwidth(0.5);
  const std::string y_grid = y.log ? "gl" : "g";
  const bool custom = x.ticks != Ticks::kPlplot;
  const std::string x_grid = custom ? "" : x.log ? "gl" : "g";
  Pl().plbox(x_grid.c_str(), 0, 0, y_grid.c_str(), 0, 0);
  Pl().plcol0(kInk);
  Pl().plwidth(1);
  // Fixed-point labels ("0.1", "100") read better than 10^n on these axes.
  const std::string y_opts = y.log ? "bcflnstv" : "bcnstv";
  const std::string x_opts = custom ? "bc" : x.log ? "bcflnst" : "bcnst";
  Pl().plbox(x_opts.c_str(), 0, 0, y_opts.c_str(), 0, 0);
  if (custom) DrawCustomTicks(x, wy0, wy1);
  Pl().plcol0(kInk);
  if (!x_label.empty()) Pl().plmtex("b", 3.2, 0.5, 0.5, PlotText(x_label).c_str());
  Pl().plmtex("l", y.log ? 6.6 : 4.5, 0.5, 0.5, PlotText(y_label).c_str());
  Pl().plschr(0, kTextScale * 1.1);
  Pl().plmtex("t", 1.0, 0.5, 0.5, PlotText(title).c_str());
  Pl().plschr(0, kTextScale);
}

void DrawPageTitle(std::string_view title) {
  Pl().plvpor(0, 1, 0, 1);
  Pl().plwind(0, 1, 0, 1);
  Pl().plcol0(kInk);
  Pl().plschr(0, kTextScale * 1.3);
  Pl().plmtex("t", -1.6, 0.5, 0.5, PlotText(title).c_str());
  Pl().plschr(0, kTextScale);
}

SeriesStyle StyleFor(int k, bool dashed) {
  static const char* const kMarkers[] = {"●", "■", "▲", "◆", "▼", "★"};
  SeriesStyle s;
  s.color = SeriesColor(k);
  s.line_style = dashed ? 2 : 1;
  s.marker = kMarkers[k % (sizeof(kMarkers) / sizeof(kMarkers[0]))];
  return s;
}

void DrawSeries(const Axis& x, const Axis& y, const std::vector<double>& xs,
                const std::vector<double>& ys, const SeriesStyle& style, bool line,
                bool markers) {
  std::vector<PLFLT> wx, wy;
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
    if (!std::isfinite(xs[i]) || !std::isfinite(ys[i])) continue;
    if (!x.Shows(xs[i]) || !y.Shows(ys[i])) continue;
    wx.push_back(x.Map(xs[i]));
    wy.push_back(y.Map(ys[i]));
  }
  if (wx.empty()) return;
  Pl().plcol0(style.color);
  Pl().pllsty(style.line_style);
  Pl().plwidth(2);
  if (line && wx.size() > 1) Pl().plline(static_cast<PLINT>(wx.size()), wx.data(), wy.data());
  Pl().pllsty(1);
  Pl().plwidth(1);
  if (markers) {
    Pl().plschr(0, kTextScale * 0.8);
    Pl().plstring(static_cast<PLINT>(wx.size()), wx.data(), wy.data(), style.marker.c_str());
    Pl().plschr(0, kTextScale);
  }
  Pl().plcol0(kInk);
}

double LegendHeight(size_t entries) { return 0.015 + 0.04 * static_cast<double>(entries); }

void DrawLegend(const std::vector<LegendEntry>& entries, const Panel& area) {
  if (entries.empty()) return;
  const size_t n = entries.size();
  std::vector<std::string> texts(n);
  std::vector<const char*> text_ptrs(n), symbols(n);
  std::vector<PLINT> opts(n, PL_LEGEND_LINE | PL_LEGEND_SYMBOL), text_colors(n, kInk),
      line_colors(n), line_styles(n), symbol_colors(n), symbol_numbers(n, 2);
  std::vector<PLFLT> line_widths(n, 2), symbol_scales(n, 0.8);
  for (size_t i = 0; i < n; ++i) {
    texts[i] = PlotText(entries[i].text);
    text_ptrs[i] = texts[i].c_str();
    symbols[i] = entries[i].style.marker.c_str();
    line_colors[i] = symbol_colors[i] = entries[i].style.color;
    line_styles[i] = entries[i].style.line_style;
  }
  Pl().plvpor(area.x0, area.x1, area.y0, area.y1);
  Pl().plwind(0, 1, 0, 1);
  PLFLT width = 0, height = 0;
  Pl().plschr(0, kTextScale);
  Pl().pllegend(&width, &height, PL_LEGEND_NONE, PL_POSITION_INSIDE | PL_POSITION_LEFT | PL_POSITION_TOP,
           0, 0, 0.08, kBackground, kBackground, 1, static_cast<PLINT>(n), 1,
           static_cast<PLINT>(n), opts.data(), 1.0, 0.95, 1.8, 0.0, text_colors.data(),
           text_ptrs.data(), nullptr, nullptr, nullptr, nullptr, line_colors.data(),
           line_styles.data(), line_widths.data(), symbol_colors.data(), symbol_scales.data(),
           symbol_numbers.data(), symbols.data());
}

std::string PlotText(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '#') out += '#';
  }
  return out;
}

}  // namespace neuron::plot
