// `ccltune export --format nccl-tuner-csv|json|applied-json [--fingerprint FP] [--redis URL
// | --results-file FILE] [--min-ctas N] [--output FILE]` (docs/design.md §8): one fingerprint's
// winners, as the JSON array the tuner plugin reads (CCLTUNE_RESULTS_FILE), as NCCL's
// example-tuner CSV, or as what ccltune's plugin applies per size (applied_json.h). The
// last two follow the plugin's rule for the application's NCCL_MIN_CTAS, given as
// --min-ctas (core/apply/applied_choice.h), and leave out records with an epilogue (the
// plugin ignores them) and host-backend records (no NCCL choice) with one note on stderr
// each, failing when nothing is left; json carries every record.
#include <cstdio>
#include <fstream>
#include <memory>

#include "core/apply/applied_choice.h"
#include "core/base/counted.h"
#include "core/results/result_store.h"
#include "worker/cli/cache_flags.h"
#include "worker/cli/commands.h"
#include "worker/export/applied_json.h"
#include "worker/export/nccl_tuner_csv.h"
#include "worker/export/plugin_table.h"
#include "worker/export/records_file.h"

namespace ccltune::worker::cli {
namespace {

struct ExportFlags {
  std::string format;
  CacheFlags cache;
  std::string results_file;
  std::string output;
  std::string dtype;
  std::string min_ctas;
};

// What a format needs from the flags, checked before the cache is opened.
struct ExportSettings {
  std::optional<core::Dtype> dtype;
  int channel_ceiling = 0;
};

// One fingerprint's records, from the cache or a file, and its node count (for the CSV's
// nNodes column; -1 when unknown, as for a file).
struct ExportInput {
  std::string fingerprint;
  std::vector<core::ResultRecord> records;
  int nodes = -1;
};

int NodesOf(core::ResultStore& store, const std::string& fp) {
  auto text = store.FingerprintJson(fp);
  if (!text.ok()) return -1;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("nodes") || !j["nodes"].is_number_integer())
    return -1;
  return j["nodes"].get<int>();
}

core::Result<ExportInput> LoadInput(const ExportFlags& f) {
  if (!f.results_file.empty()) {
    CCLTUNE_ASSIGN_OR_RETURN(auto file,
                             exporting::ReadRecordsFile(f.results_file, f.cache.fingerprint));
    return ExportInput{std::move(file.fingerprint), std::move(file.records), -1};
  }
  CCLTUNE_ASSIGN_OR_RETURN(auto loaded, LoadFingerprintRecords(f.cache));
  const int nodes = NodesOf(loaded.source->store(), loaded.fingerprint);
  return ExportInput{std::move(loaded.fingerprint), std::move(loaded.records), nodes};
}

core::Result<ExportSettings> CheckFlags(const ExportFlags& f) {
  if (f.format != "json" && f.format != "nccl-tuner-csv" && f.format != "applied-json")
    return core::InvalidArgument("--format '" + f.format +
                                 "' is not one of nccl-tuner-csv, json, applied-json");
  ExportSettings s;
  if (!f.dtype.empty()) {
    auto d = core::ParseDtype(f.dtype);
    if (!d.ok()) return d.status().WithContext("--dtype");
    s.dtype = *d;
  }
  if (!f.min_ctas.empty()) {
    if (f.format == "json")
      return core::InvalidArgument(
          "--min-ctas changes what the plugin applies, so it goes with --format nccl-tuner-csv "
          "or applied-json; --format json is the records as published");
    auto n = apply::ParseChannelCeiling(f.min_ctas);
    if (!n.ok()) return n.status().WithContext("--min-ctas (the application's NCCL_MIN_CTAS)");
    s.channel_ceiling = *n;
  }
  return s;
}

std::string Records(std::size_t n) { return core::Counted(static_cast<long long>(n), "record"); }

// Records the file holds: all for json; the plugin's formats leave out epilogue records.
std::size_t ExportedRecords(const ExportFlags& f, const ExportInput& in) {
  if (f.format == "json") return in.records.size();
  return in.records.size() - exporting::CountEpilogueRecords(in.records);
}

// To stdout, or to a file with one line on stderr saying what was written there.
int WriteOut(const ExportFlags& f, const ExportInput& in, const std::string& text) {
  const std::string& path = f.output;
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return UsageError("--output " + path + ": cannot write the file");
  std::fprintf(stderr, "ccltune export: wrote %s (%s, %s of fingerprint %s)\n", path.c_str(),
               f.format.c_str(), Records(ExportedRecords(f, in)).c_str(), in.fingerprint.c_str());
  return 0;
}

std::string Render(const ExportFlags& f, const ExportSettings& s, const ExportInput& in) {
  if (f.format == "applied-json")
    return exporting::AppliedJson(in.records, s.dtype, s.channel_ceiling).dump(2) + "\n";
  if (f.format == "nccl-tuner-csv")
    return exporting::NcclTunerCsv(in.records, in.fingerprint, in.nodes, s.dtype,
                                   s.channel_ceiling);
  nlohmann::json array = nlohmann::json::array();
  for (const auto& r : in.records) array.push_back(core::ToJson(r));
  return array.dump(2) + "\n";
}

// "2 measured with the host backend (...), 3 with an epilogue (...)": the reasons that apply.
std::string LeftOutReasons(std::size_t host, std::size_t epilogue) {
  std::string out;
  if (host > 0) out = std::to_string(host) + " measured with the host backend (no NCCL choice)";
  if (epilogue > 0) {
    out += (out.empty() ? "" : ", ") + std::to_string(epilogue) +
           " with an epilogue (NCCL's tuner cannot fuse one)";
  }
  return out;
}

// The plugin's formats hold what NCCL's tuner can apply. Host-backend records (no NCCL choice
// at all) are taken out here; records with an epilogue are left out by the plugin's table.
// Each reason gets one note. When nothing is left the export fails, before any file is
// written: a file of headers alone would read as "NCCL decides every size".
core::Status SelectPluginRecords(const ExportFlags& f, ExportInput& in) {
  const std::size_t total = in.records.size();
  if (total == 0) return core::NotFound("fingerprint " + in.fingerprint + " has no result records");
  const std::size_t host = std::erase_if(in.records, exporting::MeasuredOnHost);
  const std::size_t epilogue = exporting::CountEpilogueRecords(in.records);
  if (host == total) {
    return core::FailedPrecondition(
        "--format " + f.format + ": the " + Records(total) + " of fingerprint " + in.fingerprint +
        " were measured with the host backend: they hold no NCCL choice for NCCL's tuner to "
        "apply, so there is nothing to export in this format (--format json exports them)");
  }
  if (host + epilogue == total) {
    return core::FailedPrecondition("--format " + f.format + ": none of the " + Records(total) +
                                    " of fingerprint " + in.fingerprint +
                                    " is for NCCL's tuner: " + LeftOutReasons(host, epilogue) +
                                    " (--format json exports them)");
  }
  if (host > 0) {
    std::fprintf(stderr,
                 "ccltune export: left out %zu of %zu records, measured with the host backend "
                 "(no NCCL choice for NCCL's tuner; --format json keeps them)\n",
                 host, total);
  }
  if (epilogue > 0) {
    std::fprintf(stderr,
                 "ccltune export: skipped %s with an epilogue (NCCL's tuner cannot fuse an "
                 "epilogue; --format json keeps them for libccltune)\n",
                 Records(epilogue).c_str());
  }
  return core::Status::Ok();
}

int RunExport(const ExportFlags& f) {
  auto settings = CheckFlags(f);
  if (!settings.ok()) return UsageError(settings.status().message());
  auto input = LoadInput(f);
  if (!input.ok()) return UsageError(input.status().message());
  if (f.format != "json") {
    const core::Status selected = SelectPluginRecords(f, *input);
    if (!selected.ok()) return UsageError(selected.message());
  }
  return WriteOut(f, *input, Render(f, *settings, *input));
}

}  // namespace

Runner AddExportCommand(CLI::App& app) {
  auto f = std::make_shared<ExportFlags>();
  auto* c = app.add_subcommand("export", "Write one fingerprint's winners to a file");
  c->add_option("--format", f->format, "nccl-tuner-csv | json | applied-json")->required();
  AddCacheFlags(c, f->cache, "Fingerprint to export (required when the cache holds several)");
  c->add_option("--results-file", f->results_file,
                "Read the records from this JSON array (--format json's output) instead of the "
                "cache");
  c->add_option("--dtype", f->dtype,
                "CSV, applied-json: whose winners (default as the plugin: bf16, fp16, fp32, "
                "int32, int8)");
  c->add_option("--min-ctas", f->min_ctas,
                "CSV, applied-json: the NCCL_MIN_CTAS the application runs with (default 0: "
                "unset); ctas=N winners apply only when N <= it, as in the plugin");
  c->add_option("--output,-o", f->output, "Output file (default: stdout)");
  return [f] { return RunExport(*f); };
}

}  // namespace ccltune::worker::cli
