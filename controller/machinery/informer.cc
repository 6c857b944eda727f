#include "controller/machinery/informer.h"

#include <chrono>
#include <thread>

#include "controller/kube/kube_paths.h"
#include "core/base/log.h"

namespace ccltune::controller {

std::string ObjectKey(const Json& object) {
  const Json& md = object.at("metadata");
  return md.value("namespace", "") + "/" + md.value("name", "");
}

Informer::Informer(KubeClient& client, std::string name, std::string collection_path,
                   std::string label_selector, Handler handler, int watch_timeout_seconds)
    : client_(client),
      name_(std::move(name)),
      path_(std::move(collection_path)),
      selector_(std::move(label_selector)),
      handler_(std::move(handler)),
      watch_timeout_seconds_(watch_timeout_seconds) {}

size_t Informer::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

Json Informer::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key);
  return it == cache_.end() ? Json() : it->second;
}

void Informer::Visit(const std::function<void(const Json&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [key, obj] : cache_) fn(obj);
}

core::Status Informer::List() {
  std::string path = path_;
  if (!selector_.empty()) path += "?labelSelector=" + QueryEscape(selector_);
  CCLTUNE_ASSIGN_OR_RETURN(Json list, client_.Get(path));
  std::map<std::string, Json> fresh;
  for (const Json& item : list.value("items", Json::array())) fresh[ObjectKey(item)] = item;
  std::map<std::string, Json> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, obj] : cache_) {
      if (!fresh.count(key)) gone[key] = obj;
    }
    cache_ = fresh;
    resource_version_ = list["metadata"].value("resourceVersion", "");
  }
  // A relist replays every object, so a transition missed while the watch was down is seen.
  for (auto& [key, obj] : gone) handler_("DELETED", obj);
  for (auto& [key, obj] : fresh) handler_("ADDED", obj);
  relists_++;
  synced_ = true;
  return core::Status::Ok();
}

void Informer::Apply(const std::string& type, const Json& object) {
  std::string key = ObjectKey(object);
  {
    std::lock_guard<std::mutex> lock(mu_);
    resource_version_ = object["metadata"].value("resourceVersion", resource_version_);
    if (type == "BOOKMARK") return;
    if (type == "DELETED") {
      cache_.erase(key);
    } else {
      cache_[key] = object;
    }
  }
  handler_(type, object);
}

core::Status Informer::WatchOnce(const std::atomic<bool>& stop) {
  std::string path, rv;
  {
    std::lock_guard<std::mutex> lock(mu_);
    rv = resource_version_;
  }
  path = path_ + "?resourceVersion=" + QueryEscape(rv);
  if (!selector_.empty()) path += "&labelSelector=" + QueryEscape(selector_);
  return client_.Watch(path, watch_timeout_seconds_, [&](const Json& event) {
    if (stop.load()) return false;
    Apply(event.value("type", ""), event.value("object", Json::object()));
    return true;
  });
}

void Informer::Run(const std::atomic<bool>& stop) {
  using namespace std::chrono_literals;
  auto backoff = 500ms;
  bool need_list = true;
  while (!stop.load()) {
    core::Status s = need_list ? List() : WatchOnce(stop);
    if (s.ok()) {
      need_list = false;
      backoff = 500ms;
      continue;
    }
    if (IsExpired(s)) {
      core::LogInfo(name_ + " informer: watch expired (410), relisting");
      need_list = true;
      continue;
    }
    core::LogWarn(name_ + " informer: " + s.ToString());
    // Unknown state after an error: relist rather than trust a possibly stale version.
    need_list = true;
    for (auto waited = 0ms; waited < backoff && !stop.load(); waited += 100ms) {
      std::this_thread::sleep_for(100ms);
    }
    // Capped low: a missing CRD (installed right after the controller) should be noticed soon.
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5s));
  }
}

}  // namespace ccltune::controller
