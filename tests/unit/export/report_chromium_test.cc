// `ccltune report --html` on records of a real `ccltune tune` run (host backend), rendered
// by headless Chromium: every plot area of the first group holds a drawing, while a gap
// between panels stays blank (so the check can fail). Skips when chromium is absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/integration/ccltune_process.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/export/png_reader.h"
#include "worker/report/html_report.h"

namespace ccltune::testing {
namespace {

using worker::report::Panel;
using worker::report::ReportLayout;

std::string FindChromium() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (std::filesystem::exists(c)) return c;
  return "";
}

// Screenshot of `html` at 1200 × height, bounded by `timeout` (90 s).
core::Result<Image> Screenshot(const TempDir& dir, const std::string& html, int height) {
  const std::string png = dir.File("shot.png");
  const std::string cmd =
      "timeout 90 " + FindChromium() +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --hide-scrollbars --user-data-dir=" +
      dir.File("profile") + " --screenshot=" + png + " --window-size=1200," +
      std::to_string(height) + " file://" + html + " > " + dir.File("chromium.log") + " 2>&1";
  if (std::system(cmd.c_str()) != 0 || !std::filesystem::exists(png))
    return core::Internal("chromium failed: " + ReadFile(dir.File("chromium.log")));
  return ReadPng(png);
}

TEST(ReportChromium, PlotAreasOfARealRunAreDrawn) {
  if (FindChromium().empty())
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  TempDir dir("ccltune-report");
  auto tune = RunCcltune({"tune", "--backend", "host", "--ranks", "4", "--op", "allReduce",
                          "--sizes", "1KiB:1MiB:8", "--iters", "5", "--rounds", "3", "--warmup",
                          "1", "--redis", (*server)->url(), "--cache-dir", dir.File("cache")},
                         {}, 240);
  ASSERT_EQ(tune.code, 0) << tune.output;
  const std::string html = dir.File("report.html");
  auto report = RunCcltune({"report", "--html", html, "--redis", (*server)->url()}, {}, 60);
  ASSERT_EQ(report.code, 0) << report.output;
  const int height = ReportLayout::kHeaderHeight + ReportLayout::kSectionHeight;
  auto img = Screenshot(dir, html, height);
  ASSERT_TRUE(img.ok()) << img.status().ToString();
  ASSERT_EQ(img->width, ReportLayout::kPageWidth);
  for (Panel p :
       {Panel::kLatency, Panel::kBusBw, Panel::kWinners, Panel::kSpeedup, Panel::kLegend}) {
    const auto a = ReportLayout::DataArea(0, p);
    const auto s = Region(*img, a.x, a.y, a.width, a.height);
    EXPECT_GT(s.luma_stddev, 5.0) << "panel " << static_cast<int>(p) << " looks empty";
    EXPECT_GT(s.inked_fraction, 0.005) << "panel " << static_cast<int>(p);
  }
  const auto lat = ReportLayout::PanelBox(0, Panel::kLatency);
  const auto gap = Region(*img, lat.x + lat.width + 5, lat.y, 25, lat.height);
  EXPECT_LT(gap.luma_stddev, 0.5) << "the gap between the plots should be blank";
}

}  // namespace
}  // namespace ccltune::testing
