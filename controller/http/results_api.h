// Read-only results API (docs/design.md §8) over the shared Redis cache:
//   GET /api/v1/fingerprints
//   GET /api/v1/results?fingerprint=FP[&op=OP&dtype=DT[&redop=R]&bytes=N][&epilogue=E]
// With op, dtype and bytes: the nearest tuned bucket (ResultStore::Lookup) of the plain
// collective, or with epilogue=KIND,hidden=H (e.g. residualRmsNorm,hidden=4096) of that
// fused problem; otherwise every record of the fingerprint, optionally filtered by
// op/dtype/epilogue. JSON (records carry "epilogue" when not none); errors are
// {"error": "..."} with 400 (bad query), 404 (nothing tuned), 503 (Redis unreachable) or 500
// (anything else, e.g. cache contents that cannot be written as JSON: "internal error: ...").
#pragma once

#include <string>

#include "controller/http/http_server.h"

namespace ccltune::controller {

class ResultsApi {
 public:
  ResultsApi(std::string redis_url, std::string password)
      : redis_url_(std::move(redis_url)), password_(std::move(password)) {}
  HttpResponse Handle(const HttpRequest& req) const;
  // Result records in the cache (for ccltune_cache_entries); error when Redis is down.
  core::Result<long long> CountRecords() const;

 private:
  HttpResponse Results(const HttpRequest& req) const;
  HttpResponse Fingerprints() const;
  std::string redis_url_, password_;
};

}  // namespace ccltune::controller
