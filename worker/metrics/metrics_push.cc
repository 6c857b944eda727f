#include "worker/metrics/metrics_push.h"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "prometheus/gateway.h"

namespace ccltune::worker {
namespace {

bool IsPlainSegmentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// URL-safe base64 (RFC 4648 §5), as the Pushgateway decodes `@base64` values.
std::string Base64Url(const std::string& in) {
  if (in.empty()) return "=";  // the Pushgateway's spelling of an empty value
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

}  // namespace

std::pair<std::string, std::string> GroupingLabel(const std::string& name,
                                                  const std::string& value) {
  bool plain = !value.empty();
  for (char c : value) plain = plain && IsPlainSegmentChar(c);
  if (plain) return {name, value};
  return {name + "@base64", Base64Url(value)};
}

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
  auto gateway = std::make_shared<prometheus::Gateway>(
      address.host, address.port, "ccltune",
      prometheus::Labels{GroupingLabel("ccltune_job", job_id),
                         GroupingLabel("rank", std::to_string(rank))});
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
