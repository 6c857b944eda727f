// `ccltune report --html`: one self-contained page (inline SVG and CSS, no scripts, nothing
// fetched) for one fingerprint. Per (op, dtype, redop, epilogue): latency vs size per choice
// (log-log), busbw vs size per choice, the winner bands along the size axis, speedup of the
// winner vs the default, and a legend. Every box sits at a fixed position (ReportLayout), so
// a screenshot can be checked region by region. Epilogue groups ("allReduce bf16 sum +
// residualRmsNorm hidden=4096") have their own section with tokens on the x axis.
#pragma once

#include <string>
#include <vector>

#include "core/results/result.h"

namespace ccltune::worker::report {

enum class Panel { kLatency, kBusBw, kWinners, kSpeedup, kLegend };

struct Rect {
  int x, y, width, height;
};

// Page geometry in CSS pixels (the page is kPageWidth wide, body margin 0).
struct ReportLayout {
  static constexpr int kPageWidth = 1200;
  static constexpr int kHeaderHeight = 110;
  static constexpr int kSectionHeight = 720;
  // The whole panel box of group `group` (0-based, in page order).
  static Rect PanelBox(int group, Panel panel);
  // The data area inside a plot panel (inside the axes' frame).
  static Rect DataArea(int group, Panel panel);
};

// Groups in page order: records sorted by (op, dtype, redop, epilogue); "allReduce bf16 sum",
// "allReduce bf16 sum + residualRmsNorm hidden=4096".
std::vector<std::string> ReportGroups(const std::vector<core::ResultRecord>& records);

std::string RenderHtmlReport(const std::vector<core::ResultRecord>& records,
                             const std::string& fingerprint, const std::string& fingerprint_json);

// A stable color per choice name across the whole page.
std::string ChoiceColor(const std::vector<std::string>& all_choices, const std::string& name);

}  // namespace ccltune::worker::report
