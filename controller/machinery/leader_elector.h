// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: acquire or renew
// every retry period with resourceVersion-guarded writes; another holder's lease counts as
// held until leaseDuration after we last saw it change (local clock, so clock skew between
// replicas does not matter); a leader that cannot renew within renewDeadline steps down
// (renewDeadline < leaseDuration, so no other replica can take over before it stops).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "controller/kube/kube_client.h"

namespace ccltune::controller {

struct LeaderElectionConfig {
  std::string ns;  // namespace of the Lease
  std::string name = "ccltune-controller";
  std::string identity;  // unique per replica (pod name + random suffix)
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::milliseconds retry_period{2000};
};

class LeaderElector {
 public:
  // `on_change(true|false)` runs on the elector's thread when leadership flips.
  LeaderElector(KubeClient& kube, LeaderElectionConfig config, std::function<void(bool)> on_change);
  void Run(const std::atomic<bool>& stop);
  bool is_leader() const { return leader_.load(); }
  // Gives the lease up on shutdown so a standby takes over without waiting for expiry.
  void Release();

 private:
  bool TryAcquireOrRenew();
  bool CreateLease();
  void SetLeader(bool leader);

  KubeClient& kube_;
  LeaderElectionConfig config_;
  std::function<void(bool)> on_change_;
  std::atomic<bool> leader_{false};
  std::string observed_record_;
  std::chrono::steady_clock::time_point observed_at_{};
};

}  // namespace ccltune::controller
