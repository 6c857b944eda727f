#include "controller/machinery/leader_elector.h"

#include <algorithm>
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

core::Status CheckLeaderElectionConfig(const LeaderElectionConfig& c) {
  using std::chrono::milliseconds;
  if (c.retry_period <= milliseconds(0) || c.retry_period >= c.renew_deadline ||
      c.renew_deadline >= milliseconds(c.lease_duration)) {
    return core::InvalidArgument(
        "--leader-elect-retry-period < --leader-elect-renew-deadline < "
        "--leader-elect-lease-duration is required (got " +
        std::to_string(c.retry_period.count()) + " ms, " +
        std::to_string(c.renew_deadline.count()) + " ms, " +
        std::to_string(c.lease_duration.count()) + " s)");
  }
  return core::Status::Ok();
}

core::Status LeaderElector::CheckFence() const {
  if (!leader_.load()) return core::Unavailable("not the leader (" + config_.identity + ")");
  auto renewed = SteadyClock::time_point(SteadyClock::duration(renewed_at_ns_.load()));
  auto age = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - renewed);
  if (age < config_.renew_deadline) return core::Status::Ok();
  return core::Unavailable("fenced: " + config_.identity + " last renewed its Lease " +
                           std::to_string(age.count()) + " ms ago (renew deadline " +
                           std::to_string(config_.renew_deadline.count()) +
                           " ms); no write until it renews");
}

void LeaderElector::Run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    // Timed from before the GET: the others count our lease from when they see the PUT, later.
    auto attempt_start = SteadyClock::now();
    auto renewed = SteadyClock::time_point(SteadyClock::duration(renewed_at_ns_.load()));
    if (TryAcquireOrRenew()) {
      renewed_at_ns_ = attempt_start.time_since_epoch().count();
      SetLeader(true);
    } else if (leader_.load() && SteadyClock::now() - renewed > config_.renew_deadline) {
      SetLeader(false);
    } else if (leader_.load() && observed_record_.rfind(config_.identity + "|", 0) != 0) {
      SetLeader(false);  // someone else's name is on the lease: we were replaced
    }
    for (auto slept = std::chrono::milliseconds(0); slept < config_.retry_period && !stop.load();
         slept += std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(
          std::min(std::chrono::milliseconds(100), config_.retry_period - slept));
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
