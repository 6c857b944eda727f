// Informer: list + watch of one resource kind, keeping a read-only cache of the objects and
// calling a handler for every change. Relists when the watch's history is gone (410
// Expired), follows bookmarks, and re-watches from the last resourceVersion after the
// server's timeoutSeconds. The cache is never handed out for mutation: Snapshot copies.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "controller/kube/kube_client.h"

namespace ccltune::controller {

class Informer {
 public:
  // `collection_path` e.g. JobsPath(ns); `label_selector` may be empty. The handler runs on
  // the informer's thread and must be quick (enqueue a key).
  using Handler = std::function<void(const std::string& event_type, const Json& object)>;
  Informer(KubeClient& client, std::string name, std::string collection_path,
           std::string label_selector, Handler handler, int watch_timeout_seconds = 300);

  // Runs until `stop` is set (checked between watch requests and events).
  void Run(const std::atomic<bool>& stop);

  bool synced() const { return synced_.load(); }
  size_t size();
  long long relists() const { return relists_.load(); }
  // A copy of one cached object; null when absent.
  Json Get(const std::string& key);
  // Calls `fn` on every cached object under the cache's lock (read-only; keep it quick).
  void Visit(const std::function<void(const Json&)>& fn);

 private:
  core::Status List();
  core::Status WatchOnce(const std::atomic<bool>& stop);
  void Apply(const std::string& type, const Json& object);

  KubeClient& client_;
  std::string name_, path_, selector_;
  Handler handler_;
  int watch_timeout_seconds_;
  std::mutex mu_;
  std::map<std::string, Json> cache_;  // "namespace/name" -> object
  std::string resource_version_;
  std::atomic<bool> synced_{false};
  std::atomic<long long> relists_{0};
};

std::string ObjectKey(const Json& object);  // "namespace/name"

}  // namespace ccltune::controller
