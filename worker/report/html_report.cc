// The HTML report page (html_report.h).
#include "worker/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core/base/counted.h"
#include "worker/report/svg_plot.h"

namespace ccltune::worker::report {
namespace {

constexpr int kPlotW = 560, kPlotH = 320, kBandH = 90, kLowerH = 230;

// The x of a record: bytes, or for an epilogue problem its tokens (rows of hidden elements),
// the unit its plan was written in.
double XOf(const core::ResultRecord& r) {
  if (r.epilogue.none()) return static_cast<double>(r.bytes);
  const double row = static_cast<double>(r.epilogue.RowBytes(r.dtype));
  return row > 0 ? static_cast<double>(r.bytes) / row : static_cast<double>(r.bytes);
}

Axis XAxis(const core::ResultRecord& r) {
  if (r.epilogue.none()) return {"message size (bytes)", true, TickFormat::kBytes};
  return {"tokens (rows of " + std::to_string(r.epilogue.hidden) + " elements)", true,
          TickFormat::kNumber};
}

// Records of each group, ascending by bytes; groups in page order.
std::vector<std::vector<const core::ResultRecord*>> Grouped(
    const std::vector<core::ResultRecord>& records) {
  std::map<std::string, std::vector<const core::ResultRecord*>> by;
  for (const auto& r : records) by[r.Group()].push_back(&r);
  std::vector<std::vector<const core::ResultRecord*>> out;
  for (auto& [name, v] : by) {
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return XOf(*a) < XOf(*b); });
    out.push_back(v);
  }
  return out;
}

std::string Px(int v) { return std::to_string(v) + "px"; }

std::string Box(const Rect& r, const std::string& cls, const std::string& inner) {
  return "<div class=\"" + cls + "\" style=\"left:" + Px(r.x) + ";top:" + Px(r.y) +
         ";width:" + Px(r.width) + ";height:" + Px(r.height) + "\">" + inner + "</div>\n";
}

bool IsDefault(const std::string& name) { return name == "nccl" || name == "ring"; }

// One series per choice: (bytes, metric) of its ok measurements.
std::vector<Series> ChoiceSeries(const std::vector<const core::ResultRecord*>& group,
                                 const std::vector<std::string>& all, bool busbw) {
  std::map<std::string, Series> by;
  for (const auto* r : group) {
    for (const auto& c : r->choices) {
      if (c.status != core::ChoiceStatus::kOk) continue;
      auto& s = by[c.name];
      s.name = c.name;
      s.color = ChoiceColor(all, c.name);
      s.dashed = IsDefault(c.name);
      s.points.emplace_back(XOf(*r), busbw ? c.busbw_gbs : c.time_us);
    }
  }
  std::vector<Series> out;
  for (auto& [n, s] : by) out.push_back(std::move(s));
  return out;
}

std::vector<Band> WinnerBands(const std::vector<const core::ResultRecord*>& g,
                              const std::vector<std::string>& all, double* lo, double* hi) {
  std::vector<Band> bands;
  const auto b = [&](std::size_t i) { return XOf(*g[i]); };
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double from =
        i > 0 ? std::sqrt(b(i - 1) * b(i)) : b(i) / (g.size() > 1 ? std::sqrt(b(1) / b(0)) : 2.0);
    const double to = i + 1 < g.size() ? std::sqrt(b(i) * b(i + 1))
                                       : b(i) * (g.size() > 1 ? std::sqrt(b(i) / b(i - 1)) : 2.0);
    const std::string w = g[i]->winner.empty() ? "(none valid)" : g[i]->winner;
    bands.push_back({from, to, w, g[i]->winner.empty() ? "#999" : ChoiceColor(all, w)});
  }
  *lo = bands.front().from;
  *hi = bands.back().to;
  return bands;
}

std::string Legend(const std::vector<const core::ResultRecord*>& g,
                   const std::vector<std::string>& all) {
  std::map<std::string, int> wins, any_buffer;
  std::set<std::string> names;
  for (const auto* r : g) {
    ++wins[r->winner];
    if (r->any_buffer) ++any_buffer[r->any_buffer->choice];
    for (const auto& c : r->choices) names.insert(c.name);
  }
  const bool fused = !g.front()->epilogue.none();
  const std::string unit = fused ? " token counts" : " sizes";
  std::string s = "<div class=\"legend-title\">choices (dashed: the default)" +
                  std::string(fused ? "; *-fused run the epilogue in the all-reduce's kernel, "
                                      "the others as a separate kernel after it"
                                    : "") +
                  "</div><ul>";
  for (const auto& n : names) {
    s +=
        "<li><span class=\"swatch\" style=\"background:" + ChoiceColor(all, n) + "\"></span>" +
        EscapeXml(n) + (wins.count(n) ? " — wins " + std::to_string(wins[n]) + unit : "") +
        (any_buffer.count(n) ? "; fastest on any buffer at " + std::to_string(any_buffer[n]) : "") +
        "</li>";
  }
  return s + "</ul>";
}

// The winner's speedup, and dashed beside it that of the fastest choice a program's own
// buffers run (docs/design.md §4 anyBuffer; records from before it have no point there).
PlotSpec SpeedupPlot(const std::vector<const core::ResultRecord*>& g, const Axis& x) {
  PlotSpec sp{kPlotW, kLowerH};
  sp.title = "speedup vs the default: winner, and fastest on any buffer (dashed)";
  sp.x = x;
  sp.y = {"speedup (×, default = 1)", false, TickFormat::kNumber};
  sp.y_reference = 1.0;
  Series speed{"speedup", "#222", {}, false};
  Series any{"any buffer", "#999", {}, true};
  for (const auto* r : g) {
    speed.points.emplace_back(XOf(*r), r->speedup_vs_default);
    if (r->any_buffer) any.points.emplace_back(XOf(*r), r->any_buffer->speedup_vs_default);
  }
  sp.series = {speed};
  if (!any.points.empty()) sp.series.push_back(any);
  return sp;
}

std::string Section(int index, const std::vector<const core::ResultRecord*>& g,
                    const std::vector<std::string>& all) {
  const auto& first = *g.front();
  const auto box = [&](Panel p) { return ReportLayout::PanelBox(index, p); };
  std::string s = Box({20, box(Panel::kLatency).y - 36, 1160, 30}, "section-title",
                      EscapeXml(first.Group()) + ", " + core::Counted(first.world_size, "rank"));
  PlotSpec lat{kPlotW, kPlotH};
  const bool fused = !first.epilogue.none();
  lat.title = fused ? "latency vs tokens" : "latency vs message size";
  lat.x = XAxis(first);
  lat.y = {"time per op (µs, max over ranks)", true, TickFormat::kNumber};
  lat.series = ChoiceSeries(g, all, false);
  s += Box(box(Panel::kLatency), "panel", RenderLinePlot(lat));
  PlotSpec bw = lat;
  bw.title = fused ? "bus bandwidth vs tokens" : "bus bandwidth vs message size";
  bw.y = {"busbw (GB/s)", true, TickFormat::kNumber};
  bw.series = ChoiceSeries(g, all, true);
  s += Box(box(Panel::kBusBw), "panel", RenderLinePlot(bw));
  double lo = 1, hi = 2;
  const auto bands = WinnerBands(g, all, &lo, &hi);
  const Scale xs(lo, hi, 70, box(Panel::kWinners).width - 20, true);
  s += Box(box(Panel::kWinners), "panel",
           RenderBands(box(Panel::kWinners).width, kBandH, 70, xs, bands,
                       fused ? "winner per token count (each count's nearest tuned bucket)"
                             : "winner per message size (each size's nearest tuned bucket)"));
  s += Box(box(Panel::kSpeedup), "panel", RenderLinePlot(SpeedupPlot(g, lat.x)));
  s += Box(box(Panel::kLegend), "panel legend", Legend(g, all));
  return s;
}

constexpr char kStyle[] =
    "body{margin:0;font-family:sans-serif;background:#fff;color:#222}"
    ".page{position:relative;width:1200px}"
    ".panel,.section-title,.header{position:absolute;overflow:hidden}"
    ".section-title{font-size:18px;font-weight:bold}"
    ".header{left:20px;top:10px;width:1160px;height:90px;font-size:13px}"
    ".header h1{font-size:20px;margin:0 0 6px 0}"
    ".legend ul{list-style:none;margin:4px 0;padding:0;columns:2}"
    ".legend li{font-size:12px;margin:2px 0}.legend-title{font-weight:bold;font-size:13px}"
    ".swatch{display:inline-block;width:14px;height:10px;margin-right:6px}";

}  // namespace

Rect ReportLayout::PanelBox(int group, Panel panel) {
  const int t = kHeaderHeight + group * kSectionHeight + 40;
  switch (panel) {
    case Panel::kLatency:
      return {20, t, kPlotW, kPlotH};
    case Panel::kBusBw:
      return {620, t, kPlotW, kPlotH};
    case Panel::kWinners:
      return {20, t + kPlotH + 10, 1160, kBandH};
    case Panel::kSpeedup:
      return {20, t + kPlotH + kBandH + 20, kPlotW, kLowerH};
    case Panel::kLegend:
      return {620, t + kPlotH + kBandH + 20, kPlotW, kLowerH};
  }
  return {0, 0, 0, 0};
}

Rect ReportLayout::DataArea(int group, Panel panel) {
  const Rect b = PanelBox(group, panel);
  if (panel == Panel::kWinners) return {b.x + 70, b.y + 22, b.width - 90, kBandH - 40};
  if (panel == Panel::kLegend) return b;
  const PlotSpec m;  // the plots' margins
  return {b.x + m.margin_left, b.y + m.margin_top, b.width - m.margin_left - m.margin_right,
          b.height - m.margin_top - m.margin_bottom};
}

std::vector<std::string> ReportGroups(const std::vector<core::ResultRecord>& records) {
  std::vector<std::string> out;
  for (const auto& g : Grouped(records)) out.push_back(g.front()->Group());
  return out;
}

std::string ChoiceColor(const std::vector<std::string>& all, const std::string& name) {
  static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                   "#bcbd22", "#393b79", "#637939", "#7f7f7f"};
  const auto it = std::find(all.begin(), all.end(), name);
  const std::size_t i = it == all.end() ? std::hash<std::string>{}(name) : it - all.begin();
  if (i < 12) return kPalette[i];
  return "hsl(" + std::to_string((i * 47) % 360) + ",60%,40%)";
}

std::string RenderHtmlReport(const std::vector<core::ResultRecord>& records,
                             const std::string& fingerprint, const std::string& fingerprint_json) {
  std::set<std::string> names;
  for (const auto& r : records)
    for (const auto& c : r.choices) names.insert(c.name);
  const std::vector<std::string> all(names.begin(), names.end());
  const auto groups = Grouped(records);
  const int height =
      ReportLayout::kHeaderHeight + static_cast<int>(groups.size()) * ReportLayout::kSectionHeight;
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ccltune report " +
      EscapeXml(fingerprint) + "</title><style>" + kStyle + "</style></head><body>\n" +
      "<div class=\"page\" style=\"height:" + Px(height) + "\">\n";
  s += "<div class=\"header\"><h1>ccltune results — fingerprint " + EscapeXml(fingerprint) +
       "</h1><div>" + std::to_string(records.size()) + " tuned problems in " +
       std::to_string(groups.size()) +
       " groups. Times are the median over rounds of the max "
       "over ranks.</div><div><code>" +
       EscapeXml(fingerprint_json) + "</code></div></div>\n";
  for (std::size_t i = 0; i < groups.size(); ++i) s += Section(static_cast<int>(i), groups[i], all);
  return s + "</div></body></html>\n";
}

}  // namespace ccltune::worker::report
