// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: acquire or renew
// every retry period with resourceVersion-guarded writes; another holder's lease counts as
// held until leaseDuration after we last saw it change (local clock, so clock skew between
// replicas does not matter); a leader that cannot renew within renewDeadline steps down
// (renewDeadline < leaseDuration, so no other replica can take over before it stops).
//
// Fencing: CheckFence() allows writes only while the last successful renewal (timed from
// before its GET, on the monotonic clock) is younger than renewDeadline. A replica frozen past
// its lease and resumed therefore writes nothing until this thread has renewed the Lease by a
// resourceVersion-guarded PUT (compare-and-swap), which fails if another replica took over.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "controller/kube/kube_client.h"
#include "core/base/status.h"

namespace ccltune::controller {

struct LeaderElectionConfig {
  std::string ns;  // namespace of the Lease
  std::string name = "ccltune-controller";
  std::string identity;  // unique per replica (pod name + random suffix)
  std::chrono::seconds lease_duration{15};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

// retry period < renew deadline < lease duration, as client-go requires; the error names the
// controller's flags.
core::Status CheckLeaderElectionConfig(const LeaderElectionConfig& c);

class LeaderElector {
 public:
  // `on_change(true|false)` runs on the elector's thread when leadership flips.
  LeaderElector(KubeClient& kube, LeaderElectionConfig config, std::function<void(bool)> on_change);
  void Run(const std::atomic<bool>& stop);
  bool is_leader() const { return leader_.load(); }
  // OK while this replica leads by a renewal younger than renew_deadline; otherwise why not.
  // Thread-safe; the reconciler's writes check it (FencedKubeClient).
  core::Status CheckFence() const;
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
  // steady_clock ns at the start of the last successful acquire or renew (0: never).
  std::atomic<long long> renewed_at_ns_{0};
  std::string observed_record_;
  std::chrono::steady_clock::time_point observed_at_{};
};

}  // namespace ccltune::controller
