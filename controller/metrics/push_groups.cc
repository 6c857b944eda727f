#include "controller/metrics/push_groups.h"

#include <curl/curl.h>

#include <memory>

#include "core/metrics/push_group.h"

namespace ccltune::controller {
namespace {

using CurlHandle = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;

// The Pushgateway's answer body says nothing the status code does not: drop it.
size_t DiscardBody(char*, size_t size, size_t n, void*) { return size * n; }

core::Status DeleteOne(CURL* curl, const std::string& url, long timeout_ms) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, DiscardBody);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // several reconcile threads
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) return core::Unavailable(curl_easy_strerror(rc));
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  if (code < 200 || code >= 300) {
    return core::Unavailable("the Pushgateway answered HTTP " + std::to_string(code));
  }
  return core::Status::Ok();
}

}  // namespace

PushGroups::PushGroups(std::chrono::milliseconds timeout) : timeout_(timeout) {
  curl_global_init(CURL_GLOBAL_DEFAULT);  // before any thread uses curl
}

core::Status PushGroups::Delete(const std::string& base_url, const std::string& job_id,
                                int ranks) const {
  CurlHandle curl(curl_easy_init(), curl_easy_cleanup);  // one handle: the connection is reused
  if (!curl) return core::Internal("curl_easy_init failed");
  for (int rank = 0; rank < ranks; ++rank) {
    const std::string path = core::TuningPushGroupPath(job_id, rank);
    core::Status st = DeleteOne(curl.get(), base_url + path, static_cast<long>(timeout_.count()));
    if (!st.ok()) return st.WithContext("DELETE " + base_url + path);
  }
  return core::Status::Ok();
}

int PushGroups::CountFailure(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return ++failures_[job_id];
}

void PushGroups::Forget(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(job_id);
}

}  // namespace ccltune::controller
