// `ccltune report --html FILE [--fingerprint FP] [--redis URL]` (docs/design.md §9): the HTML page
// of one fingerprint's results (worker/report/html_report.h).
#include <cstdio>
#include <fstream>
#include <memory>

#include "core/base/counted.h"
#include "worker/cli/cache_flags.h"
#include "worker/cli/commands.h"
#include "worker/report/html_report.h"

namespace ccltune::worker::cli {
namespace {

struct ReportFlags {
  std::string html;
  CacheFlags cache;
};

int RunReport(const ReportFlags& f) {
  if (f.html.empty()) return UsageError("--html FILE is required (where to write the page)");
  auto loaded = LoadFingerprintRecords(f.cache);
  if (!loaded.ok()) return UsageError(loaded.status().message());
  const auto& [source, fp, records] = *loaded;
  if (records.empty()) return UsageError("fingerprint " + fp + " has no result records");
  auto fp_json = source->store().FingerprintJson(fp);
  const std::string page =
      report::RenderHtmlReport(records, fp, fp_json.ok() ? *fp_json : std::string());
  std::ofstream out(f.html, std::ios::trunc);
  out << page;
  out.close();
  if (!out) return UsageError("--html " + f.html + ": cannot write the file");
  std::fprintf(stderr, "ccltune report: wrote %s (%s, fingerprint %s)\n", f.html.c_str(),
               core::Counted(static_cast<long long>(records.size()), "problem").c_str(),
               fp.c_str());
  return 0;
}

}  // namespace

Runner AddReportCommand(CLI::App& app) {
  auto f = std::make_shared<ReportFlags>();
  auto* c = app.add_subcommand("report", "Write an HTML report of one fingerprint's results");
  c->add_option("--html", f->html, "Output HTML file")->required();
  AddCacheFlags(c, f->cache, "Fingerprint to report (required when the cache holds several)");
  return [f] { return RunReport(*f); };
}

}  // namespace ccltune::worker::cli
