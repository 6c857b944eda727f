#include "controller/http/results_api.h"

#include <exception>
#include <nlohmann/json.hpp>

#include "controller/cache/redis_connect.h"
#include "core/base/sizes.h"
#include "core/redis/redis_client.h"
#include "core/results/result_store.h"

namespace ccltune::controller {
namespace {

using Json = nlohmann::json;

// Strict: data from the cache that is not UTF-8 throws (Handle answers 500), never served
// garbled.
HttpResponse JsonResponse(int code, const Json& body) {
  return {code, "application/json", body.dump() + "\n"};
}

// An error message may quote the client's input (a fingerprint decoded from %FF): bytes that
// are not UTF-8 become U+FFFD, so the client still gets its 400 naming the parameter.
HttpResponse Error(int code, const std::string& message) {
  const Json body = {{"error", message}};
  return {code, "application/json",
          body.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"};
}

int HttpCodeOf(const core::Status& s) {
  switch (s.code()) {
    case core::StatusCode::kInvalidArgument:
      return 400;
    case core::StatusCode::kNotFound:
      return 404;
    case core::StatusCode::kUnavailable:
    case core::StatusCode::kTimeout:
      return 503;
    default:
      return 500;
  }
}

// Query parameters of a point lookup; InvalidArgument names the bad parameter.
core::Status ParseLookup(const HttpRequest& req, core::Op* op, core::Dtype* dtype,
                         core::RedOp* redop, std::uint64_t* bytes) {
  CCLTUNE_ASSIGN_OR_RETURN(*op, core::ParseOp(req.query.at("op")));
  CCLTUNE_ASSIGN_OR_RETURN(*dtype, core::ParseDtype(req.query.at("dtype")));
  *redop = core::IsReducing(*op) ? core::RedOp::kSum : core::RedOp::kNone;
  if (req.query.count("redop") && core::IsReducing(*op)) {
    CCLTUNE_ASSIGN_OR_RETURN(*redop, core::ParseRedOp(req.query.at("redop")));
  }
  auto b = core::ParseSize(req.query.at("bytes"));
  if (!b.ok()) return core::InvalidArgument("bytes: " + b.status().message());
  *bytes = *b;
  return core::Status::Ok();
}

// The optional `epilogue` parameter ("residualRmsNorm,hidden=4096"; absent or "none" = a
// plain collective). Fused records live under their own keys, so a lookup without it
// never lands on them.
core::Result<core::Epilogue> ParseEpilogueParam(const HttpRequest& req) {
  const auto it = req.query.find("epilogue");
  if (it == req.query.end()) return core::Epilogue{};
  auto e = core::ParseEpilogueKeyPart(it->second);
  if (!e.ok()) {
    return core::InvalidArgument("epilogue: " + e.status().message() +
                                 " (expected epilogue=KIND,hidden=H, e.g. "
                                 "epilogue=residualRmsNorm,hidden=4096, or epilogue=none)");
  }
  return *e;
}

}  // namespace

HttpResponse ResultsApi::Handle(const HttpRequest& req) const {
  // Caught here, not only at the server's edge, so the answer is the API's JSON error and the
  // route counts it (ccltune_results_requests_total{code="500"}).
  try {
    if (req.path == "/api/v1/fingerprints") return Fingerprints();
    return Results(req);
  } catch (const std::exception& e) {
    return Error(500, std::string("internal error: ") + e.what());
  }
}

HttpResponse ResultsApi::Fingerprints() const {
  auto redis = ThreadRedis(redis_url_, password_);
  if (!redis.ok()) return Error(HttpCodeOf(redis.status()), redis.status().message());
  core::ResultStore store(**redis);
  auto fps = store.Fingerprints();
  if (!fps.ok()) return Error(HttpCodeOf(fps.status()), fps.status().message());
  return JsonResponse(200, {{"fingerprints", *fps}});
}

HttpResponse ResultsApi::Results(const HttpRequest& req) const {
  if (!req.query.count("fingerprint")) return Error(400, "fingerprint: required");
  const std::string& fp = req.query.at("fingerprint");
  bool point = req.query.count("op") && req.query.count("dtype") && req.query.count("bytes");
  core::Op op{};
  core::Dtype dtype{};
  core::RedOp redop{};
  std::uint64_t bytes = 0;
  if (point) {
    core::Status s = ParseLookup(req, &op, &dtype, &redop, &bytes);
    if (!s.ok()) return Error(400, s.message());
  }
  auto epilogue = ParseEpilogueParam(req);
  if (!epilogue.ok()) return Error(400, epilogue.status().message());
  auto redis = ThreadRedis(redis_url_, password_);
  if (!redis.ok()) return Error(HttpCodeOf(redis.status()), redis.status().message());
  core::ResultStore store(**redis);
  if (point) {
    auto rec = store.Lookup(fp, op, dtype, redop, bytes, *epilogue);
    if (!rec.ok()) return Error(HttpCodeOf(rec.status()), rec.status().message());
    return JsonResponse(200, core::ToJson(*rec));
  }
  auto all = store.List(fp);
  if (!all.ok()) return Error(HttpCodeOf(all.status()), all.status().message());
  Json out = Json::array();
  for (const auto& r : *all) {
    if (req.query.count("op") && req.query.at("op") != core::OpName(r.op)) continue;
    if (req.query.count("dtype") && req.query.at("dtype") != core::DtypeName(r.dtype)) continue;
    if (req.query.count("epilogue") && r.epilogue.KeyPart() != epilogue->KeyPart()) continue;
    out.push_back(core::ToJson(r));
  }
  return JsonResponse(200, {{"fingerprint", fp}, {"results", out}});
}

core::Result<long long> ResultsApi::CountRecords() const {
  CCLTUNE_ASSIGN_OR_RETURN(auto redis, ThreadRedis(redis_url_, password_));
  return core::ResultStore(*redis).CountRecords();
}

}  // namespace ccltune::controller
