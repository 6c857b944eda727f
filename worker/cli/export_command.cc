// `ccltune export --format nccl-tuner-csv|json [--fingerprint FP] [--redis URL]
// [--output FILE]` (DESIGN §8): one fingerprint's winners, as the JSON array the tuner
// plugin reads (CCLTUNE_RESULTS_FILE) or as NCCL's example-tuner CSV.
#include <cstdio>
#include <fstream>
#include <memory>

#include "core/result_store.h"
#include "worker/cli/cache_flags.h"
#include "worker/cli/commands.h"
#include "worker/export/nccl_tuner_csv.h"

namespace ccltune::worker::cli {
namespace {

struct ExportFlags {
  std::string format;
  CacheFlags cache;
  std::string output;
  std::string dtype;
};

// The fingerprint's node count, for the CSV's nNodes column; -1 when unreadable.
int NodesOf(core::ResultStore& store, const std::string& fp) {
  auto text = store.FingerprintJson(fp);
  if (!text.ok()) return -1;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("nodes") || !j["nodes"].is_number_integer())
    return -1;
  return j["nodes"].get<int>();
}

int WriteOut(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return UsageError("--output " + path + ": cannot write the file");
  return 0;
}

int RunExport(const ExportFlags& f) {
  if (f.format != "json" && f.format != "nccl-tuner-csv")
    return UsageError("--format '" + f.format + "' is not one of nccl-tuner-csv, json");
  std::optional<core::Dtype> dtype;
  if (!f.dtype.empty()) {
    auto d = core::ParseDtype(f.dtype);
    if (!d.ok()) return UsageError(d.status().WithContext("--dtype").message());
    dtype = *d;
  }
  auto loaded = LoadFingerprintRecords(f.cache);
  if (!loaded.ok()) return UsageError(loaded.status().message());
  const auto& [source, fp, records] = *loaded;
  if (f.format == "json") {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& r : records) array.push_back(core::ToJson(r));
    return WriteOut(f.output, array.dump(2) + "\n");
  }
  return WriteOut(f.output,
                  exporting::NcclTunerCsv(records, fp, NodesOf(source->store(), fp), dtype));
}

}  // namespace

Runner AddExportCommand(CLI::App& app) {
  auto f = std::make_shared<ExportFlags>();
  auto* c = app.add_subcommand("export", "Write one fingerprint's winners to a file");
  c->add_option("--format", f->format, "nccl-tuner-csv | json")->required();
  AddCacheFlags(c, f->cache, "Fingerprint to export (required when the cache holds several)");
  c->add_option("--dtype", f->dtype,
                "CSV: whose winners (default as the plugin: bf16, fp16, fp32, int32, int8)");
  c->add_option("--output,-o", f->output, "Output file (default: stdout)");
  return [f] { return RunExport(*f); };
}

}  // namespace ccltune::worker::cli
