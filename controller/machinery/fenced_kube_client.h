// A KubeClient whose writes (create, update, patch, delete) pass only while a fence allows
// them; reads and watches always pass. The reconciler writes through one, fenced by the
// leader elector (LeaderElector::CheckFence), so a replica that was frozen past its lease
// (SIGSTOP, a long GC-like stall, a paused VM) and then resumed sends no write before it has
// renewed its Lease: each write is checked just before it is sent, not once per reconcile.
#pragma once

#include <functional>

#include "controller/kube/kube_client.h"

namespace ccltune::controller {

class FencedKubeClient : public KubeClient {
 public:
  // `fence` returns OK to allow a write, or the reason it is refused (the write then fails
  // with that Status without reaching the API server). Both outlive this object.
  FencedKubeClient(KubeClient& inner, std::function<core::Status()> fence)
      : inner_(inner), fence_(std::move(fence)) {}

  core::Result<Json> Get(const std::string& path) override { return inner_.Get(path); }
  core::Result<Json> Create(const std::string& collection_path, const Json& body) override;
  core::Result<Json> Update(const std::string& path, const Json& body) override;
  core::Result<Json> MergePatch(const std::string& path, const Json& patch) override;
  core::Status Delete(const std::string& path) override;
  core::Status Watch(const std::string& path, int timeout_seconds,
                     const std::function<bool(const Json&)>& on_event) override {
    return inner_.Watch(path, timeout_seconds, on_event);
  }

 private:
  core::Status Check(const std::string& what) const;

  KubeClient& inner_;
  std::function<core::Status()> fence_;
};

}  // namespace ccltune::controller
