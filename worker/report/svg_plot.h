// Inline-SVG line plots for the HTML report: log or linear axes, one polyline with markers
// per series, ticks and axis labels with units. Pure string generation (no I/O), so the
// geometry can be unit-tested: the scales are monotonic and every series becomes a path.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ccltune::worker::report {

// Maps [lo, hi] (data) onto [px_lo, px_hi] (pixels; px_hi < px_lo for a y axis).
// Log scales need lo > 0; values are clamped into [lo, hi] so nothing leaves the plot.
class Scale {
 public:
  Scale(double lo, double hi, double px_lo, double px_hi, bool log);
  double operator()(double v) const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  bool log() const { return log_; }

 private:
  double lo_, hi_, px_lo_, px_hi_;
  bool log_;
};

enum class TickFormat { kBytes, kNumber };

struct Axis {
  std::string label;  // with the unit: "message size (bytes)", "time (µs)"
  bool log = true;
  TickFormat format = TickFormat::kNumber;
};

struct Series {
  std::string name;
  std::string color;                              // CSS color
  std::vector<std::pair<double, double>> points;  // (x, y); non-positive y dropped on log
  bool dashed = false;
};

struct PlotSpec {
  int width = 560, height = 320;
  int margin_left = 70, margin_right = 20, margin_top = 30, margin_bottom = 50;
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  double y_reference = 0;  // > 0: a horizontal dashed line there (speedup 1.0)
};

// <svg> element of exactly width × height. Each series is one <path class="series"
// data-series="name">; the data area is [margin_left, width-margin_right] ×
// [margin_top, height-margin_bottom].
std::string RenderLinePlot(const PlotSpec& spec);

// Colored bands along a log x axis (same margins as the plots above it): band i spans
// [from, to) in data units, labelled when wide enough.
struct Band {
  double from, to;
  std::string label, color;
};
std::string RenderBands(int width, int height, int margin_left, const Scale& x,
                        const std::vector<Band>& bands, const std::string& title);

// Data range of the plot's x or y values (positive only when log), padded for a log axis
// to whole decades (y) or left exact (x).
std::pair<double, double> DataRange(const std::vector<Series>& series, bool y, bool log);

std::string EscapeXml(const std::string& s);
std::string FormatBytes(double bytes);  // 1024 -> "1KiB"

}  // namespace ccltune::worker::report
