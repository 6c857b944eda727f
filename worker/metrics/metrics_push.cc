#include "worker/metrics/metrics_push.h"

#include <curl/curl.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "core/metrics/push_group.h"
#include "prometheus/gateway.h"

namespace ccltune::worker {

core::Result<GatewayAddress> ParseGatewayUrl(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> parsed(curl_url(), curl_url_cleanup);
  if (!parsed) return core::Internal("curl_url: out of memory");
  if (CURLUcode rc = curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0); rc != CURLUE_OK)
    return core::InvalidArgument("pushgateway URL '" + url + "': " + curl_url_strerror(rc));
  auto part = [&](CURLUPart which) {
    char* text = nullptr;
    std::string out;
    if (curl_url_get(parsed.get(), which, &text, CURLU_DEFAULT_PORT) == CURLUE_OK) out = text;
    curl_free(text);
    return out;
  };
  std::string scheme = part(CURLUPART_SCHEME), host = part(CURLUPART_HOST);
  if (scheme != "http" && scheme != "https")
    return core::InvalidArgument("pushgateway URL '" + url + "' must be http:// or https://");
  if (host.empty()) return core::InvalidArgument("pushgateway URL '" + url + "' has no host");
  std::string prefix = part(CURLUPART_PATH);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  // prometheus::Gateway builds "<host>:<port>/metrics/job/…": a path prefix rides on the port.
  return GatewayAddress{scheme + "://" + host, part(CURLUPART_PORT) + prefix};
}

core::Status PushMetrics(const std::string& url, const std::string& job_id, int rank,
                         const core::Registry& registry, double timeout_seconds) {
  CCLTUNE_ASSIGN_OR_RETURN(GatewayAddress address, ParseGatewayUrl(url));
  prometheus::Labels grouping;
  for (const auto& [name, value] : core::TuningPushGrouping(job_id, rank)) grouping[name] = value;
  auto gateway = std::make_shared<prometheus::Gateway>(address.host, address.port,
                                                       core::kTuningPushJob, grouping);
  gateway->RegisterCollectable(registry.collectable());
  std::future<int> pushed = gateway->AsyncPush();
  if (pushed.wait_for(std::chrono::duration<double>(timeout_seconds)) !=
      std::future_status::ready) {
    // The future's destructor would wait for curl: leave both to a thread of their own.
    std::thread([gateway, pushed = std::move(pushed)]() mutable { pushed.wait(); }).detach();
    return core::TimeoutError("push to " + url + ": no answer within " +
                              std::to_string(timeout_seconds) + " s");
  }
  int code = pushed.get();  // the HTTP status, or minus a CURLcode
  if (code < 0)
    return core::Unavailable("push to " + url + ": " +
                             curl_easy_strerror(static_cast<CURLcode>(-code)));
  if (code < 200 || code >= 300)
    return core::Unavailable("push to " + url + ": the Pushgateway answered HTTP " +
                             std::to_string(code));
  return core::Status::Ok();
}

}  // namespace ccltune::worker
