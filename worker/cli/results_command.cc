// `ccltune results [--fingerprint FP] [--op OP --dtype DT --bytes N [--redop R] [--epilogue E]]
// [--json] [-v]` (docs/design.md §9): the shared cache's winners. Without --op: every record as
// tables (every fingerprint unless --fingerprint; a listing of nothing says so on stderr, exit
// 0). With it: the one record nearest to that size, as JSON, of one fingerprint (exit 1 when
// nothing is tuned for the problem). A --fingerprint the cache does not hold: exit 2.
#include <cstdio>
#include <memory>
#include <optional>

#include "core/base/sizes.h"
#include "core/plan/plan.h"
#include "core/results/result_store.h"
#include "worker/cli/cache_flags.h"
#include "worker/cli/commands.h"
#include "worker/launcher/report_table.h"

namespace ccltune::worker::cli {
namespace {

struct ResultsFlags {
  CacheFlags cache;
  std::string op, dtype, redop = "sum", bytes;
  std::string epilogue;  // "residualRmsNorm,hidden=4096" or "none"; empty = any (listing)
  bool json = false;
  bool verbose = false;
};

struct Query {
  core::Op op;
  core::Dtype dtype;
  core::RedOp redop;
  std::uint64_t bytes;
  core::Epilogue epilogue;  // none = the plain collective
};

// --epilogue KIND,hidden=H: the key part of a fused problem (docs/design.md §8).
core::Result<core::Epilogue> ParseEpilogueFlag(const std::string& text) {
  auto e = core::ParseEpilogueKeyPart(text);
  if (!e.ok()) {
    return core::InvalidArgument("--epilogue: " + e.status().message() +
                                 " (e.g. --epilogue residualRmsNorm,hidden=4096, or none)");
  }
  return e;
}

core::Result<std::optional<Query>> ParseQuery(const ResultsFlags& f) {
  if (f.op.empty() && f.dtype.empty() && f.bytes.empty()) return std::optional<Query>{};
  if (f.op.empty() || f.dtype.empty() || f.bytes.empty())
    return core::InvalidArgument("--op, --dtype and --bytes go together (a lookup of one size)");
  auto op = core::ParseOp(f.op);
  if (!op.ok()) return op.status().WithContext("--op");
  auto dt = core::ParseDtype(f.dtype);
  if (!dt.ok()) return dt.status().WithContext("--dtype");
  core::RedOp redop = core::RedOp::kNone;
  if (core::IsReducing(*op)) {
    auto r = core::ParseRedOp(f.redop);
    if (!r.ok()) return r.status().WithContext("--redop");
    redop = *r;
  }
  auto bytes = core::ParseSize(f.bytes);
  if (!bytes.ok()) return bytes.status().WithContext("--bytes");
  CCLTUNE_ASSIGN_OR_RETURN(core::Epilogue epilogue, ParseEpilogueFlag(f.epilogue));
  return std::optional<Query>(Query{*op, *dt, redop, *bytes, epilogue});
}

// A listing that found nothing says what it looked for and where (on stderr: stdout keeps
// what a script parses, an empty JSON array with --json).
void SayNothingListed(const std::string& where, const ResultsFlags& f) {
  std::string what = "no results";
  if (!f.cache.fingerprint.empty()) what += " for fingerprint " + f.cache.fingerprint;
  if (!f.epilogue.empty()) what += " with epilogue " + f.epilogue;
  std::fprintf(
      stderr, "ccltune results: %s in %s%s\n", what.c_str(), where.c_str(),
      f.cache.fingerprint.empty() && f.epilogue.empty() ? " (run `ccltune tune` to fill it)" : "");
}

// Every record, or with --epilogue only those of that epilogue (none = plain collectives).
int PrintRecords(exporting::CacheSource& src, const std::vector<std::string>& fps,
                 const ResultsFlags& f) {
  std::optional<core::Epilogue> only;
  if (!f.epilogue.empty()) {
    auto e = ParseEpilogueFlag(f.epilogue);
    if (!e.ok()) return UsageError(e.status().message());
    only = *e;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& fp : fps) {
    auto records = src.store().List(fp);
    if (!records.ok()) return UsageError(records.status().message());
    if (only) {
      std::erase_if(*records, [&](const core::ResultRecord& r) {
        return r.epilogue.KeyPart() != only->KeyPart();
      });
    }
    if (!f.json) PrintResultsTable(stdout, *records, f.verbose);
    for (const auto& r : *records) out.push_back(core::ToJson(r));
  }
  if (f.json) std::printf("%s\n", out.dump(2).c_str());
  if (out.empty()) SayNothingListed(src.where(), f);
  return 0;
}

// Exit 1: a lookup that found no record, which is an answer (NCCL's default), not a bad flag.
int NothingTuned(const Query& q, const std::string& fp, const std::string& where) {
  std::string problem = std::string(core::OpName(q.op)) + " " + core::DtypeName(q.dtype);
  if (core::IsReducing(q.op)) problem += std::string(" ") + core::RedOpName(q.redop);
  if (!q.epilogue.none()) problem += " + " + q.epilogue.Label();
  const std::string in = fp.empty() ? where : "fingerprint " + fp + " of " + where;
  std::fprintf(stderr,
               "ccltune results: nothing tuned for that problem (%s, any size) in %s; NCCL's "
               "default applies\n",
               problem.c_str(), in.c_str());
  return 1;
}

// One answer needs one fingerprint: with several in the cache, each cluster shape has its own
// winner, so answering from whichever comes first would be a wrong answer given as valid.
// The fingerprint is picked by the rule export and report use (exporting::PickFingerprint).
int Lookup(exporting::CacheSource& src, const std::string& wanted, const Query& q) {
  auto fp = exporting::PickFingerprint(src.store(), wanted, src.where());
  if (!fp.ok()) {
    // An empty cache holds no winner for any problem: NCCL's default, as for an untuned size.
    if (fp.status().code() == core::StatusCode::kNotFound && wanted.empty())
      return NothingTuned(q, "", src.where());
    return UsageError(fp.status().message());
  }
  auto r = src.store().Lookup(*fp, q.op, q.dtype, q.redop, q.bytes, q.epilogue);
  if (r.ok()) {
    std::printf("%s\n", core::ToJson(*r).dump(2).c_str());
    return 0;
  }
  if (r.status().code() != core::StatusCode::kNotFound) return UsageError(r.status().message());
  return NothingTuned(q, *fp, src.where());
}

// A listing names its fingerprint, or lists them all (each titled). A fingerprint named but
// not in the cache is a bad --fingerprint (exit 2), as for export and report.
int RunResults(ResultsFlags& f) {
  auto query = ParseQuery(f);
  if (!query.ok()) return UsageError(query.status().message());
  auto src = exporting::CacheSource::Open(f.cache.redis, f.cache.cache_dir);
  if (!src.ok()) return UsageError(src.status().message());
  if (*query) return Lookup(**src, f.cache.fingerprint, **query);
  auto all = (*src)->store().Fingerprints();
  if (!all.ok()) return UsageError(all.status().message());
  std::vector<std::string> fps = *all;
  if (!f.cache.fingerprint.empty()) {
    auto fp = exporting::PickFingerprintAmong(*all, f.cache.fingerprint, (*src)->where());
    if (!fp.ok()) return UsageError(fp.status().message());
    fps = {*fp};
  }
  return PrintRecords(**src, fps, f);
}

}  // namespace

Runner AddResultsCommand(CLI::App& app) {
  auto f = std::make_shared<ResultsFlags>();
  auto* c = app.add_subcommand("results", "Show tuned winners from the shared cache");
  AddCacheFlags(c, f->cache,
                "Only this fingerprint (listing default: all; a lookup needs it when the cache "
                "holds several)");
  c->add_option("--op", f->op, "Look up one problem: op");
  c->add_option("--dtype", f->dtype, "Look up one problem: dtype");
  c->add_option("--redop", f->redop, "Look up one problem: reduce op (default sum)");
  c->add_option("--bytes", f->bytes, "Look up one problem: message size (nearest tuned)");
  c->add_option("--epilogue", f->epilogue,
                "Fused problems only: KIND,hidden=H (e.g. residualRmsNorm,hidden=4096) or none");
  c->add_flag("--json", f->json, "Print records as JSON");
  c->add_flag("--verbose,-v", f->verbose, "Show every choice");
  return [f] { return RunResults(*f); };
}

}  // namespace ccltune::worker::cli
