// `ccltune report --html FILE [--fingerprint FP] [--redis URL]` (DESIGN §9): the HTML page
// of one fingerprint's results (worker/report/html_report.h).
#include <cstdio>
#include <fstream>
#include <memory>

#include "worker/cli/commands.h"
#include "worker/export/cache_source.h"
#include "worker/report/html_report.h"

namespace ccltune::worker::cli {
namespace {

struct ReportFlags {
  std::string html;
  std::string fingerprint;
  std::string redis;
  std::string cache_dir;
};

int RunReport(const ReportFlags& f) {
  if (f.html.empty()) return UsageError("--html FILE is required (where to write the page)");
  auto src = exporting::CacheSource::Open(f.redis, f.cache_dir);
  if (!src.ok()) return UsageError(src.status().message());
  auto& store = (*src)->store();
  auto fp = exporting::PickFingerprint(store, f.fingerprint);
  if (!fp.ok()) return UsageError(fp.status().message());
  auto records = store.List(*fp);
  if (!records.ok()) return UsageError(records.status().message());
  if (records->empty()) return UsageError("fingerprint " + *fp + " has no result records");
  auto fp_json = store.FingerprintJson(*fp);
  const std::string page =
      report::RenderHtmlReport(*records, *fp, fp_json.ok() ? *fp_json : std::string());
  std::ofstream out(f.html, std::ios::trunc);
  out << page;
  out.close();
  if (!out) return UsageError("--html " + f.html + ": cannot write the file");
  std::fprintf(stderr, "ccltune report: wrote %s (%zu problems, fingerprint %s)\n", f.html.c_str(),
               records->size(), fp->c_str());
  return 0;
}

}  // namespace

Runner AddReportCommand(CLI::App& app) {
  auto f = std::make_shared<ReportFlags>();
  auto* c = app.add_subcommand("report", "Write an HTML report of one fingerprint's results");
  c->add_option("--html", f->html, "Output HTML file")->required();
  c->add_option("--fingerprint", f->fingerprint,
                "Fingerprint to report (required when the cache holds several)");
  c->add_option("--redis", f->redis, "Redis URL (default: the private one of `ccltune tune`)")
      ->envname("CCLTUNE_REDIS_URL");
  c->add_option("--cache-dir", f->cache_dir, "Private Redis data directory");
  return [f] { return RunReport(*f); };
}

}  // namespace ccltune::worker::cli
