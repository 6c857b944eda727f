// What the commands that read the shared cache (results, export, report) have in common:
// the flags naming the cache and the fingerprint, and, for export and report, loading the
// one fingerprint's records.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/results/result.h"
#include "worker/export/cache_source.h"

namespace ccltune::worker::cli {

struct CacheFlags {
  std::string redis;        // --redis (CCLTUNE_REDIS_URL); empty: the private Redis
  std::string cache_dir;    // --cache-dir of the private Redis
  std::string fingerprint;  // --fingerprint
};

void AddCacheFlags(CLI::App* command, CacheFlags& flags, const std::string& fingerprint_help);

struct FingerprintRecords {
  std::unique_ptr<exporting::CacheSource> source;  // keeps the store (and a private Redis) up
  std::string fingerprint;
  std::vector<core::ResultRecord> records;
};

// Opens the cache, picks the fingerprint (exporting::PickFingerprint) and lists its records.
core::Result<FingerprintRecords> LoadFingerprintRecords(const CacheFlags& flags);

}  // namespace ccltune::worker::cli
