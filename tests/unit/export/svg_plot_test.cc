// The report's SVG generator: every choice becomes a path in the right plot, scales are
// monotonic, and the page is self-contained (no scripts, nothing fetched).
#include "worker/report/svg_plot.h"

#include <gtest/gtest.h>

#include <regex>

#include "tests/unit/export/records_fixture.h"
#include "worker/report/html_report.h"

namespace ccltune::worker::report {
namespace {

std::size_t Count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

TEST(Scale, LogAndLinearAreMonotonicAndHitTheEnds) {
  const Scale x(1024, 1 << 26, 70, 540, true);
  const Scale y(1, 1000, 290, 30, true);  // pixels grow downwards
  const Scale lin(0.5, 2.0, 200, 30, false);
  EXPECT_DOUBLE_EQ(x(1024), 70);
  EXPECT_DOUBLE_EQ(x(1 << 26), 540);
  EXPECT_DOUBLE_EQ(y(1), 290);
  EXPECT_DOUBLE_EQ(y(1000), 30);
  EXPECT_NEAR(x(1 << 16), (70 + 540) / 2.0 - (540 - 70) / 16.0 * 0, 60);
  double prev_x = -1, prev_y = 1e9, prev_l = 1e9;
  for (double v = 1; v < 1e8; v *= 1.37) {
    EXPECT_GE(x(v), prev_x);
    EXPECT_LE(y(v), prev_y);
    EXPECT_LE(lin(v / 1e4), prev_l);
    prev_x = x(v), prev_y = y(v), prev_l = lin(v / 1e4);
  }
  // Out-of-range values are clamped into the plot.
  EXPECT_DOUBLE_EQ(x(1), 70);
  EXPECT_DOUBLE_EQ(y(1e9), 30);
}

TEST(RenderLinePlot, OnePathPerSeriesInsideTheDataArea) {
  PlotSpec p;
  p.x = {"message size (bytes)", true, TickFormat::kBytes};
  p.y = {"time (µs)", true, TickFormat::kNumber};
  p.series = {{"nccl", "#111", {{1024, 10}, {65536, 20}, {1 << 20, 80}}, true},
              {"nccl:algo=ring,proto=ll", "#222", {{1024, 8}, {65536, 25}}, false},
              {"<odd>&name", "#333", {{1024, 0}, {2048, -1}}, false}};  // nothing plottable
  const std::string svg = RenderLinePlot(p);
  EXPECT_EQ(Count(svg, "class=\"series\""), 2u);
  EXPECT_NE(svg.find("data-series=\"nccl\""), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"nccl:algo=ring,proto=ll\""), std::string::npos);
  EXPECT_EQ(svg.find("<odd>"), std::string::npos);
  EXPECT_NE(svg.find("message size (bytes)"), std::string::npos);
  EXPECT_NE(svg.find("1KiB"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  // Every path coordinate lies in the data area.
  const std::regex coord(R"([ML](-?[0-9.]+) (-?[0-9.]+))");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), coord); it != std::sregex_iterator();
       ++it) {
    const double px = std::stod((*it)[1]), py = std::stod((*it)[2]);
    EXPECT_GE(px, p.margin_left);
    EXPECT_LE(px, p.width - p.margin_right);
    EXPECT_GE(py, p.margin_top);
    EXPECT_LE(py, p.height - p.margin_bottom);
  }
}

TEST(HtmlReport, EveryChoiceOfEveryGroupIsPlottedAndNothingIsFetched) {
  const auto records = testing::FixtureSet("abcdef0123456789");
  const std::string html = RenderHtmlReport(records, "abcdef0123456789", "{\"nodes\":1}");
  const auto groups = ReportGroups(records);
  ASSERT_EQ(groups.size(), 3u);  // allGather fp32, allReduce bf16, allReduce fp32
  for (const auto& g : groups) EXPECT_NE(html.find(g), std::string::npos) << g;
  // allReduce bf16 has 6 choices: latency and busbw panels draw each one.
  for (const char* name : {"nccl", "nccl:algo=ring,proto=ll", "nccl:algo=tree,proto=simple",
                           "oneshot:blocks=8,threads=512", "nccl:ctas=16"}) {
    EXPECT_GE(Count(html, std::string("data-series=\"") + name + "\""), 2u) << name;
  }
  EXPECT_EQ(Count(html, "class=\"band\""), records.size());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_NE(html.find("speedup"), std::string::npos);
  EXPECT_NE(html.find("busbw (GB/s)"), std::string::npos);
}

// Issue 43: the fastest choice for any buffer is drawn beside the winner's speedup and counted
// in the legend; records without it (older ones) draw nothing of it.
TEST(HtmlReport, TheAnyBufferChoiceIsDrawnBesideTheWinner) {
  auto records = testing::FixtureSet("abcdef0123456789");
  EXPECT_EQ(RenderHtmlReport(records, "abcdef0123456789", "{}").find("data-series=\"any buffer\""),
            std::string::npos);
  for (auto& r : records) r.any_buffer = core::AnyBufferChoice{"nccl:ctas=16", 5, 1.25};
  const std::string html = RenderHtmlReport(records, "abcdef0123456789", "{}");
  EXPECT_EQ(Count(html, "data-series=\"any buffer\""), ReportGroups(records).size());
  EXPECT_NE(html.find("fastest on any buffer at "), std::string::npos) << html;
}

TEST(HtmlReport, LayoutBoxesDoNotOverlap) {
  for (int g = 0; g < 2; ++g) {
    std::vector<Rect> boxes;
    for (Panel p :
         {Panel::kLatency, Panel::kBusBw, Panel::kWinners, Panel::kSpeedup, Panel::kLegend})
      boxes.push_back(ReportLayout::PanelBox(g, p));
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      EXPECT_LE(boxes[i].x + boxes[i].width, ReportLayout::kPageWidth);
      EXPECT_LE(boxes[i].y + boxes[i].height,
                ReportLayout::kHeaderHeight + (g + 1) * ReportLayout::kSectionHeight);
      for (std::size_t j = i + 1; j < boxes.size(); ++j) {
        const auto& a = boxes[i];
        const auto& b = boxes[j];
        const bool apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y ||
                           b.y + b.height <= a.y;
        EXPECT_TRUE(apart) << g << ": " << i << " overlaps " << j;
      }
    }
  }
}

}  // namespace
}  // namespace ccltune::worker::report
