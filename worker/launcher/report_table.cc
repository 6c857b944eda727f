#include "worker/launcher/report_table.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/base/counted.h"
#include "core/plan/choice.h"
#include "core/plan/types.h"

namespace ccltune::worker {
namespace {

// Epilogue groups get a tokens column (rows of `hidden` elements) after the size.
std::string TokensHeader(const core::ResultRecord& r) {
  if (r.epilogue.none()) return "";
  char cell[16];
  std::snprintf(cell, sizeof cell, " %8s", "tokens");
  return cell;
}

std::string TokensCell(const core::ResultRecord& r) {
  if (r.epilogue.none()) return "";
  char cell[32];
  std::snprintf(cell, sizeof cell, " %8llu",
                static_cast<unsigned long long>(r.epilogue.Tokens(r.bytes, r.dtype)));
  return cell;
}

double AlgBw(const core::ResultRecord& r, double time_us) {
  const auto bytes = core::EffectiveBytes(r.op, r.dtype, r.bytes, r.world_size);
  return time_us > 0 && std::isfinite(time_us) ? static_cast<double>(bytes) / time_us / 1e3 : 0;
}

void PrintHeader(std::FILE* out, const core::ResultRecord& r) {
  std::fprintf(out, "\n# %s, %s%s%s\n", r.Group().c_str(),
               core::Counted(r.world_size, "rank").c_str(),
               r.fingerprint.empty() ? "" : ", fingerprint ", r.fingerprint.c_str());
  std::fprintf(out, "#%11s%s %10s %6s %6s %12s  %-24s %10s %12s %12s %8s  %s\n", "size",
               TokensHeader(r).c_str(), "count", "type", "redop", "default(us)", "winner",
               "time(us)", "algbw(GB/s)", "busbw(GB/s)", "speedup",
               "any buffer (time(us), speedup)");
}

// The fastest choice a program's own buffers run (docs/design.md §4 anyBuffer): "= winner"
// when the winner runs on any buffer; "-" for records written before the field existed.
std::string AnyBufferCell(const core::ResultRecord& r) {
  if (!r.any_buffer) return "-";
  if (r.any_buffer->choice == r.winner) return "= winner";
  char cell[64];
  std::snprintf(cell, sizeof cell, " %.2f %.2fx", r.any_buffer->time_us,
                r.any_buffer->speedup_vs_default);
  return r.any_buffer->choice + cell;
}

void PrintChoices(std::FILE* out, const core::ResultRecord& r) {
  const int indent = 52 + static_cast<int>(TokensHeader(r).size());
  for (const auto& c : r.choices) {
    const bool ok = c.status == core::ChoiceStatus::kOk;
    // An eager tune's cost to issue it (docs/design.md §4 hostUs), where measured.
    char host[48] = "";
    if (c.host_us) std::snprintf(host, sizeof host, " (host %.2f us a call)", *c.host_us);
    // The winner row's precision: us to 0.01, GB/s to 0.001.
    char time[32] = "-", algbw[32] = "-", busbw[32] = "-";
    if (ok) {
      std::snprintf(time, sizeof time, "%.2f", c.time_us);
      std::snprintf(algbw, sizeof algbw, "%.3f", AlgBw(r, c.time_us));
      std::snprintf(busbw, sizeof busbw, "%.3f", c.busbw_gbs);
    }
    std::fprintf(out, "%*s  %-24s %10s %12s %12s  %s%s%s%s\n", indent, "", c.name.c_str(), time,
                 algbw, busbw, core::ChoiceStatusName(c.status), host, c.reason.empty() ? "" : ": ",
                 c.reason.substr(0, 120).c_str());
  }
}

}  // namespace

void PrintResultsTable(std::FILE* out, const std::vector<core::ResultRecord>& records,
                       bool verbose) {
  std::string group;
  for (const auto& r : records) {
    if (r.Group() != group) {
      group = r.Group();
      PrintHeader(out, r);
    }
    const auto count = core::ElementCount(r.op, r.dtype, r.bytes, r.world_size);
    if (r.winner.empty()) {
      std::fprintf(out, " %11llu%s %10llu %6s %6s %12s  %-24s\n",
                   static_cast<unsigned long long>(r.bytes), TokensCell(r).c_str(),
                   static_cast<unsigned long long>(count), core::DtypeName(r.dtype),
                   core::RedOpName(r.redop), "-", "(no valid choice)");
    } else {
      std::fprintf(out, " %11llu%s %10llu %6s %6s %12.2f  %-24s %10.2f %12.3f %12.3f %7.2fx  %s\n",
                   static_cast<unsigned long long>(r.bytes), TokensCell(r).c_str(),
                   static_cast<unsigned long long>(count), core::DtypeName(r.dtype),
                   core::RedOpName(r.redop), r.default_time_us, r.winner.c_str(), r.time_us,
                   AlgBw(r, r.time_us), r.busbw_gbs, r.speedup_vs_default,
                   AnyBufferCell(r).c_str());
    }
    if (verbose) PrintChoices(out, r);
  }
}

}  // namespace ccltune::worker
