// SVG plot generation (svg_plot.h).
#include "worker/report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ccltune::worker::report {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

std::string TickLabel(double v, TickFormat f) {
  if (f == TickFormat::kBytes) return FormatBytes(v);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

// Tick values: powers of 2 (bytes) or 1-2-5 decades (numbers) on a log axis; 5 even steps
// on a linear one.
std::vector<double> Ticks(const Scale& s, TickFormat f) {
  std::vector<double> out;
  if (!s.log()) {
    for (int i = 0; i <= 4; ++i) out.push_back(s.lo() + (s.hi() - s.lo()) * i / 4);
    return out;
  }
  if (f == TickFormat::kBytes) {
    const int a = static_cast<int>(std::ceil(std::log2(s.lo())));
    const int b = static_cast<int>(std::floor(std::log2(s.hi())));
    const int step = std::max(1, (b - a + 7) / 8);
    for (int e = a; e <= b; e += step) out.push_back(std::ldexp(1.0, e));
    return out;
  }
  const int a = static_cast<int>(std::floor(std::log10(s.lo())));
  const int b = static_cast<int>(std::ceil(std::log10(s.hi())));
  const bool fine = b - a <= 2;
  for (int e = a; e <= b; ++e) {
    for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double v = m * std::pow(10.0, e);
      if (v >= s.lo() * 0.999 && v <= s.hi() * 1.001) out.push_back(v);
    }
  }
  return out;
}

std::string AxesSvg(const PlotSpec& p, const Scale& xs, const Scale& ys) {
  const int x0 = p.margin_left, x1 = p.width - p.margin_right;
  const int y0 = p.height - p.margin_bottom, y1 = p.margin_top;
  std::string s = "<rect class=\"frame\" x=\"" + Num(x0) + "\" y=\"" + Num(y1) + "\" width=\"" +
                  Num(x1 - x0) + "\" height=\"" + Num(y0 - y1) +
                  "\" fill=\"none\" stroke=\"#888\"/>";
  for (double t : Ticks(xs, p.x.format)) {
    const double x = xs(t);
    s += "<line x1=\"" + Num(x) + "\" x2=\"" + Num(x) + "\" y1=\"" + Num(y1) + "\" y2=\"" +
         Num(y0) + "\" stroke=\"#e4e4e4\"/><text x=\"" + Num(x) + "\" y=\"" + Num(y0 + 16) +
         "\" text-anchor=\"middle\" font-size=\"11\">" + TickLabel(t, p.x.format) + "</text>";
  }
  for (double t : Ticks(ys, p.y.format)) {
    const double y = ys(t);
    s += "<line x1=\"" + Num(x0) + "\" x2=\"" + Num(x1) + "\" y1=\"" + Num(y) + "\" y2=\"" +
         Num(y) + "\" stroke=\"#e4e4e4\"/><text x=\"" + Num(x0 - 6) + "\" y=\"" + Num(y + 4) +
         "\" text-anchor=\"end\" font-size=\"11\">" + TickLabel(t, p.y.format) + "</text>";
  }
  s += "<text class=\"xlabel\" x=\"" + Num((x0 + x1) / 2.0) + "\" y=\"" + Num(p.height - 8) +
       "\" text-anchor=\"middle\" font-size=\"12\">" + EscapeXml(p.x.label) + "</text>";
  s += "<text class=\"ylabel\" transform=\"translate(14," + Num((y0 + y1) / 2.0) +
       ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" + EscapeXml(p.y.label) +
       "</text>";
  s += "<text x=\"" + Num(x0) + "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" +
       EscapeXml(p.title) + "</text>";
  return s;
}

std::string SeriesSvg(const Series& se, const Scale& xs, const Scale& ys) {
  std::string d, marks;
  for (const auto& [x, y] : se.points) {
    if (!std::isfinite(x) || !std::isfinite(y) || (xs.log() && x <= 0) || (ys.log() && y <= 0))
      continue;
    d += (d.empty() ? "M" : " L") + Num(xs(x)) + " " + Num(ys(y));
    marks += "<circle cx=\"" + Num(xs(x)) + "\" cy=\"" + Num(ys(y)) + "\" r=\"3\" fill=\"" +
             se.color + "\"/>";
  }
  if (d.empty()) return "";
  return "<path class=\"series\" data-series=\"" + EscapeXml(se.name) + "\" d=\"" + d +
         "\" fill=\"none\" stroke=\"" + se.color + "\" stroke-width=\"2\"" +
         (se.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>" + marks;
}

}  // namespace

Scale::Scale(double lo, double hi, double px_lo, double px_hi, bool log)
    : lo_(lo), hi_(hi), px_lo_(px_lo), px_hi_(px_hi), log_(log) {
  if (log_ && lo_ <= 0) lo_ = std::numeric_limits<double>::min();
  if (!(hi_ > lo_)) hi_ = log_ ? lo_ * 10 : lo_ + 1;  // a single value still gets a span
}

double Scale::operator()(double v) const {
  v = std::clamp(v, lo_, hi_);
  const double t = log_ ? (std::log(v) - std::log(lo_)) / (std::log(hi_) - std::log(lo_))
                        : (v - lo_) / (hi_ - lo_);
  return px_lo_ + t * (px_hi_ - px_lo_);
}

std::pair<double, double> DataRange(const std::vector<Series>& series, bool y, bool log) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      const double v = y ? p.second : p.first;
      if (!std::isfinite(v) || (log && v <= 0)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!std::isfinite(lo)) return {1, 10};
  if (log && y) return {lo / 1.25, hi * 1.25};
  return {lo, hi};
}

std::string RenderLinePlot(const PlotSpec& p) {
  auto [xlo, xhi] = DataRange(p.series, false, p.x.log);
  auto [ylo, yhi] = DataRange(p.series, true, p.y.log);
  if (!p.y.log) {
    ylo = std::min(ylo, p.y_reference > 0 ? p.y_reference : ylo) * 0.95;
    yhi = std::max(yhi, p.y_reference) * 1.05;
  }
  const Scale xs(xlo, xhi, p.margin_left, p.width - p.margin_right, p.x.log);
  const Scale ys(ylo, yhi, p.height - p.margin_bottom, p.margin_top, p.y.log);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(p.width) +
                  "\" height=\"" + Num(p.height) + "\" font-family=\"sans-serif\">";
  s += AxesSvg(p, xs, ys);
  if (p.y_reference > 0) {
    s += "<line class=\"reference\" x1=\"" + Num(p.margin_left) + "\" x2=\"" +
         Num(p.width - p.margin_right) + "\" y1=\"" + Num(ys(p.y_reference)) + "\" y2=\"" +
         Num(ys(p.y_reference)) + "\" stroke=\"#444\" stroke-dasharray=\"4 4\"/>";
  }
  for (const auto& se : p.series) s += SeriesSvg(se, xs, ys);
  return s + "</svg>";
}

std::string RenderBands(int width, int height, int margin_left, const Scale& x,
                        const std::vector<Band>& bands, const std::string& title) {
  const int top = 22, bottom = height - 18;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) +
                  "\" height=\"" + Num(height) + "\" font-family=\"sans-serif\">";
  s += "<text x=\"" + Num(margin_left) + "\" y=\"14\" font-size=\"13\" font-weight=\"bold\">" +
       EscapeXml(title) + "</text>";
  for (const auto& b : bands) {
    const double a = x(b.from), e = x(b.to);
    s += "<rect class=\"band\" x=\"" + Num(a) + "\" y=\"" + Num(top) + "\" width=\"" +
         Num(std::max(1.0, e - a)) + "\" height=\"" + Num(bottom - top) + "\" fill=\"" + b.color +
         "\" stroke=\"#fff\"><title>" + EscapeXml(b.label) + "</title></rect>";
    if (e - a > 7.0 * static_cast<double>(b.label.size()))
      s += "<text x=\"" + Num((a + e) / 2) + "\" y=\"" + Num((top + bottom) / 2.0 + 4) +
           "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#fff\">" + EscapeXml(b.label) +
           "</text>";
  }
  for (double t : Ticks(x, TickFormat::kBytes))
    s += "<text x=\"" + Num(x(t)) + "\" y=\"" + Num(height - 4) +
         "\" text-anchor=\"middle\" font-size=\"11\">" + FormatBytes(t) + "</text>";
  return s + "</svg>";
}

std::string EscapeXml(const std::string& in) {
  std::string out;
  for (char c : in) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string FormatBytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g%s", bytes, kUnits[u]);
  return buf;
}

}  // namespace ccltune::worker::report
