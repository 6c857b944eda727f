#include "controller/machinery/leader_elector.h"

#include <thread>

#include "controller/kube/kube_paths.h"
#include "controller/kube/time_util.h"
#include "core/base/log.h"

namespace ccltune::controller {

using Json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

LeaderElector::LeaderElector(KubeClient& kube, LeaderElectionConfig config,
                             std::function<void(bool)> on_change)
    : kube_(kube), config_(std::move(config)), on_change_(std::move(on_change)) {}

bool LeaderElector::CreateLease() {
  std::string now = FormatMicroTime(Clock::now());
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", config_.name}, {"namespace", config_.ns}}},
                {"spec",
                 {{"holderIdentity", config_.identity},
                  {"leaseDurationSeconds", config_.lease_duration.count()},
                  {"acquireTime", now},
                  {"renewTime", now},
                  {"leaseTransitions", 0}}}};
  return kube_.Create(LeasesPath(config_.ns), lease).ok();
}

bool LeaderElector::TryAcquireOrRenew() {
  auto got = kube_.Get(LeasePath(config_.ns, config_.name));
  if (!got.ok()) return IsNotFound(got.status()) && CreateLease();
  Json lease = std::move(got).value();
  Json& spec = lease["spec"];
  std::string holder = spec.value("holderIdentity", "");
  std::string record = holder + "|" + spec.value("renewTime", "");
  auto now = SteadyClock::now();
  if (record != observed_record_) {
    observed_record_ = record;
    observed_at_ = now;
  }
  auto duration = std::chrono::seconds(spec.value("leaseDurationSeconds", 15));
  bool held_by_other = !holder.empty() && holder != config_.identity;
  if (held_by_other && observed_at_ + duration > now) return false;
  std::string stamp = FormatMicroTime(Clock::now());
  if (holder != config_.identity) {
    spec["acquireTime"] = stamp;
    spec["leaseTransitions"] = spec.value("leaseTransitions", 0) + (holder.empty() ? 0 : 1);
  }
  spec["holderIdentity"] = config_.identity;
  spec["leaseDurationSeconds"] = config_.lease_duration.count();
  spec["renewTime"] = stamp;
  // The PUT carries the resourceVersion we read: of two racing replicas one gets 409.
  return kube_.Update(LeasePath(config_.ns, config_.name), lease).ok();
}

void LeaderElector::SetLeader(bool leader) {
  if (leader_.exchange(leader) == leader) return;
  core::LogInfo(std::string("leader election: ") + config_.identity +
                (leader ? " became the leader" : " lost the lease; reconciling stops"));
  if (on_change_) on_change_(leader);
}

void LeaderElector::Run(const std::atomic<bool>& stop) {
  auto last_renew = SteadyClock::now();
  while (!stop.load()) {
    if (TryAcquireOrRenew()) {
      last_renew = SteadyClock::now();
      SetLeader(true);
    } else if (leader_.load() && SteadyClock::now() - last_renew > config_.renew_deadline) {
      SetLeader(false);
    } else if (leader_.load() && observed_record_.rfind(config_.identity + "|", 0) != 0) {
      SetLeader(false);  // someone else's name is on the lease: we were replaced
    }
    for (auto slept = std::chrono::milliseconds(0); slept < config_.retry_period && !stop.load();
         slept += std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

void LeaderElector::Release() {
  if (!leader_.load()) return;
  auto got = kube_.Get(LeasePath(config_.ns, config_.name));
  if (!got.ok()) return;
  Json lease = std::move(got).value();
  if (lease["spec"].value("holderIdentity", "") != config_.identity) return;
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = FormatMicroTime(Clock::now());
  (void)kube_.Update(LeasePath(config_.ns, config_.name), lease);
  SetLeader(false);
}

}  // namespace ccltune::controller
