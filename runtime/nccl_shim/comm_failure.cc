// A failed communicator's errors, as NCCL would report a lost peer (comm_failure.h).
#include "runtime/nccl_shim/comm_failure.h"

#include <mutex>
#include <string>

namespace ccltune::shim {
namespace {

std::mutex g_mu;
std::string g_last;  // the last failure reported, for ncclGetLastError(NULL)
thread_local std::string t_text;

ncclResult_t Reported(const runtime::CommFailure& f) {
  const std::string message = f.message();
  std::lock_guard<std::mutex> lock(g_mu);
  g_last = message;
  return ncclRemoteError;
}

std::shared_ptr<const runtime::CommFailure> FailureOf(ncclComm_t comm) {
  if (comm == nullptr) return nullptr;  // only a shim that is on tracks communicators
  const std::shared_ptr<CommEntry> e = CommRegistry::Get().Find(comm);
  if (!e) return nullptr;
  std::shared_ptr<const runtime::CommFailure> f = e->Failure();
  return f && f->failed() ? f : nullptr;
}

}  // namespace

ncclResult_t FailedResult(const CommEntry& e) {
  const std::shared_ptr<const runtime::CommFailure> f = e.Failure();
  return f && f->failed() ? Reported(*f) : ncclSuccess;
}

bool AsyncErrorOf(ncclComm_t comm, ncclResult_t* error) {
  const std::shared_ptr<const runtime::CommFailure> f = FailureOf(comm);
  if (!f || error == nullptr) return false;
  *error = Reported(*f);
  return true;
}

const char* LastFailureText(ncclComm_t comm) {
  if (const std::shared_ptr<const runtime::CommFailure> f = FailureOf(comm)) {
    t_text = f->message();
    return t_text.c_str();
  }
  if (comm != nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_last.empty()) return nullptr;
  t_text = g_last;
  return t_text.c_str();
}

}  // namespace ccltune::shim
