// The communicators libccltune-nccl tracks (comm_registry.h).
#include "runtime/nccl_shim/comm_registry.h"

#include "runtime/telemetry/telemetry_link.h"

namespace ccltune::shim {

void CommEntry::Count(Forward f) {
  forwarded[static_cast<int>(f)].fetch_add(1, std::memory_order_relaxed);
  // The runtime's own telemetry counted these already (RuntimeComm::Serve).
  if (f == Forward::kWinnerNccl || f == Forward::kStagingFull || f == Forward::kNoRecords) return;
  if (const runtime::TelemetryApi* t = runtime::Telemetry()) t->forwarded(ForwardName(f), 1);
}

const char* ForwardName(Forward f) {
  switch (f) {
    case Forward::kInGroup:
      return "in a group";
    case Forward::kNonBlocking:
      return "non-blocking communicator";
    case Forward::kNotTuned:
      return "type or op not tuned";
    case Forward::kEmpty:
      return "empty";
    case Forward::kCapture:
      return "captured before the context";
    case Forward::kPlain:
      return "no context";
    case Forward::kWinnerNccl:
      return "winner is NCCL's own";
    case Forward::kStagingFull:
      return "staging area full";
    case Forward::kSlowerHere:
      return "slower in this program";  // RuntimeComm::kSlowerHere
    case Forward::kNoRecords:
      return "no records for its op, type and reduction";  // RuntimeComm::kNoRecords
    default:
      return "?";
  }
}

void CommEntry::SetFailure(std::shared_ptr<const runtime::CommFailure> f) {
  std::lock_guard<std::mutex> lock(failure_mu_);
  failure_ = std::move(f);
}

std::shared_ptr<const runtime::CommFailure> CommEntry::Failure() const {
  std::lock_guard<std::mutex> lock(failure_mu_);
  return failure_;
}

void CommEntry::FoldRan() {
  for (const auto& [name, n] : ran_live) ran[std::string(name)] += n;
  ran_live.clear();
}

std::string CommEntry::Summary() {
  std::lock_guard<std::mutex> lock(mu);
  FoldRan();
  std::uint64_t served = 0, forwards = 0;
  std::string choices, reasons;
  for (const auto& [name, n] : ran) {
    served += n;
    choices += (choices.empty() ? "" : ", ") + name + " " + std::to_string(n);
  }
  for (int i = 0; i < static_cast<int>(Forward::kCount); ++i) {
    const std::uint64_t n = forwarded[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    forwards += n;
    reasons += std::string(reasons.empty() ? "" : ", ") + ForwardName(static_cast<Forward>(i)) +
               " " + std::to_string(n);
  }
  return std::to_string(served) + " calls served by winners" +
         (choices.empty() ? "" : " (" + choices + ")") + ", " + std::to_string(forwards) +
         " forwarded" + (reasons.empty() ? "" : " (" + reasons + ")");
}

CommRegistry& CommRegistry::Get() {
  static CommRegistry* registry = new CommRegistry;  // never destroyed: used until exit
  return *registry;
}

void CommRegistry::Add(ncclComm_t comm, bool blocking) {
  if (comm == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  comms_[comm] = std::make_shared<CommEntry>(blocking);
}

std::shared_ptr<CommEntry> CommRegistry::Find(ncclComm_t comm) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = comms_.find(comm);
  return it == comms_.end() ? nullptr : it->second;
}

std::shared_ptr<CommEntry> CommRegistry::Remove(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = comms_.find(comm);
  if (it == comms_.end()) return nullptr;
  std::shared_ptr<CommEntry> entry = std::move(it->second);
  comms_.erase(it);
  return entry;
}

}  // namespace ccltune::shim
