// The NCCL functions libccltune-nccl writes by hand (every other one is a generated
// forwarder): the three collectives ccltune tunes, the group calls whose depth decides
// whether a call may be served, the communicator lifecycle, so that each communicator
// the application makes is known and its context torn down before NCCL frees it (and the
// first one's init is preceded by the settings NCCL reads once per process, first_init.h), and the
// error queries, so that a context whose kernels lost a peer is reported (comm_failure.h), and
// buffer registration, which tells captured calls which of the program's buffers they may read
// directly and when one is gone (runtime/direct/segment_registry.h).
#include <nccl.h>

#include <map>
#include <mutex>

#include "runtime/direct/segment_registry.h"
#include "runtime/nccl_shim/comm_failure.h"
#include "runtime/nccl_shim/comm_registry.h"
#include "runtime/nccl_shim/first_init.h"
#include "runtime/nccl_shim/group_calls.h"
#include "runtime/nccl_shim/real_calls.h"
#include "runtime/nccl_shim/serve.h"
#include "runtime/nccl_shim/shim_export.h"
#include "runtime/nccl_types.h"

namespace real = ccltune::shim::real;
using ccltune::runtime::Call;
using ccltune::runtime::MakeCall;
using ccltune::shim::BlockingOf;
using ccltune::shim::CommRegistry;

namespace {

ncclResult_t RealAllReduce(const Call& c, ncclComm_t comm) {
  return real::ncclAllReduce(c.send, c.recv, c.count, c.nccl_type, c.nccl_op, comm, c.stream);
}
ncclResult_t RealAllGather(const Call& c, ncclComm_t comm) {
  return real::ncclAllGather(c.send, c.recv, c.count, c.nccl_type, comm, c.stream);
}
ncclResult_t RealReduceScatter(const Call& c, ncclComm_t comm) {
  return real::ncclReduceScatter(c.send, c.recv, c.count, c.nccl_type, c.nccl_op, comm, c.stream);
}

bool Made(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

void Track(ncclResult_t r, ncclComm_t comm, bool blocking) {
  if (Made(r) && ccltune::shim::ShimOn()) CommRegistry::Get().Add(comm, blocking);
}

// A child's mode: its config's, else its parent's (NCCL's rule for split and shrink).
bool ChildBlocking(ncclComm_t parent, const ncclConfig_t* config) {
  const std::shared_ptr<ccltune::shim::CommEntry> p = CommRegistry::Get().Find(parent);
  const bool parent_blocks = p ? p->blocking : BlockingOf(nullptr, nullptr);
  return BlockingOf(config, &parent_blocks);
}

// NCCL's registration handles, by the buffer they registered (ncclCommDeregister names only
// the handle).
struct Registrations {
  std::mutex mu;
  std::map<void*, void*> buffer_of;
};
Registrations& Registered() {
  static Registrations* r = new Registrations;  // used until the process ends
  return *r;
}

}  // namespace

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size,
                                                  void** handle) {
  const ncclResult_t r = real::ncclCommRegister(comm, buff, size, handle);
  if (r == ncclSuccess && handle != nullptr && ccltune::shim::ShimOn()) {
    std::lock_guard<std::mutex> lock(Registered().mu);
    Registered().buffer_of[*handle] = buff;
    ccltune::runtime::direct::SegmentRegistry::Get().Register(buff, size);
  }
  return r;
}

// Withdrawn here before NCCL forgets the handle: the program frees the memory next.
CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  {
    std::lock_guard<std::mutex> lock(Registered().mu);
    auto it = Registered().buffer_of.find(handle);
    if (it != Registered().buffer_of.end()) {
      ccltune::runtime::direct::SegmentRegistry::Get().Deregister(it->second);
      Registered().buffer_of.erase(it);
    }
  }
  return real::ncclCommDeregister(comm, handle);
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                               ncclDataType_t datatype, ncclRedOp_t op,
                                               ncclComm_t comm, cudaStream_t stream) {
  return ccltune::shim::Collective(MakeCall(ccltune::core::Op::kAllReduce, sendbuff, recvbuff,
                                            count, datatype, op, true, stream),
                                   comm, RealAllReduce);
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff,
                                               size_t sendcount, ncclDataType_t datatype,
                                               ncclComm_t comm, cudaStream_t stream) {
  return ccltune::shim::Collective(MakeCall(ccltune::core::Op::kAllGather, sendbuff, recvbuff,
                                            sendcount, datatype, ncclSum, false, stream),
                                   comm, RealAllGather);
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff,
                                                   size_t recvcount, ncclDataType_t datatype,
                                                   ncclRedOp_t op, ncclComm_t comm,
                                                   cudaStream_t stream) {
  return ccltune::shim::Collective(MakeCall(ccltune::core::Op::kReduceScatter, sendbuff, recvbuff,
                                            recvcount, datatype, op, true, stream),
                                   comm, RealReduceScatter);
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclGroupStart() {
  const ncclResult_t r = real::ncclGroupStart();
  if (r == ncclSuccess) ccltune::shim::EnterGroup();
  return r;
}

// The held calls run (ours) or join NCCL's group (forwarded) before NCCL's group ends.
CCLTUNE_SHIM_EXPORT ncclResult_t ncclGroupEnd() {
  const ncclResult_t held =
      ccltune::shim::LeaveGroup() ? ccltune::shim::FlushGroup(true) : ncclSuccess;
  const ncclResult_t r = real::ncclGroupEnd();
  return held != ncclSuccess ? held : r;
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  const ncclResult_t held =
      ccltune::shim::LeaveGroup() ? ccltune::shim::FlushGroup(false) : ncclSuccess;
  const ncclResult_t r = real::ncclGroupSimulateEnd(simInfo);
  return held != ncclSuccess ? held : r;
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                                  int rank) {
  ccltune::shim::BeforeFirstInit(nranks, rank);
  const ncclResult_t r = real::ncclCommInitRank(comm, nranks, commId, rank);
  if (comm != nullptr) Track(r, *comm, BlockingOf(nullptr, nullptr));
  return r;
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                                        ncclUniqueId commId, int rank,
                                                        ncclConfig_t* config) {
  ccltune::shim::BeforeFirstInit(nranks, rank);
  const ncclResult_t r = real::ncclCommInitRankConfig(comm, nranks, commId, rank, config);
  if (comm != nullptr) Track(r, *comm, BlockingOf(config, nullptr));
  return r;
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks,
                                                          int myrank, int nId,
                                                          ncclUniqueId* commIds,
                                                          ncclConfig_t* config) {
  ccltune::shim::BeforeFirstInit(nranks, myrank);
  const ncclResult_t r =
      real::ncclCommInitRankScalable(newcomm, nranks, myrank, nId, commIds, config);
  if (newcomm != nullptr) Track(r, *newcomm, BlockingOf(config, nullptr));
  return r;
}

// One thread drives every rank: their calls come in groups, served whole or forwarded
// whole (group_calls.h), and their contexts are made together at the first such group.
CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  ccltune::shim::BeforeFirstInit(ndev, 0);
  const ncclResult_t r = real::ncclCommInitAll(comm, ndev, devlist);
  for (int i = 0; comm != nullptr && i < ndev; ++i) Track(r, comm[i], BlockingOf(nullptr, nullptr));
  return r;
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                               ncclComm_t* newcomm, ncclConfig_t* config) {
  const ncclResult_t r = real::ncclCommSplit(comm, color, key, newcomm, config);
  if (newcomm != nullptr && *newcomm != nullptr) Track(r, *newcomm, ChildBlocking(comm, config));
  return r;
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList,
                                                int excludeRanksCount, ncclComm_t* newcomm,
                                                ncclConfig_t* config, int shrinkFlags) {
  const ncclResult_t r =
      real::ncclCommShrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  if (newcomm != nullptr && *newcomm != nullptr) Track(r, *newcomm, ChildBlocking(comm, config));
  return r;
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  ccltune::shim::Release(comm, "finalized", /*abort=*/false, /*forget=*/false);
  return real::ncclCommFinalize(comm);
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  ccltune::shim::Release(comm, "destroyed", /*abort=*/false, /*forget=*/true);
  return real::ncclCommDestroy(comm);
}

CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  ccltune::shim::Release(comm, "aborted", /*abort=*/true, /*forget=*/true);
  return real::ncclCommAbort(comm);
}

// A revoked communicator takes no new collectives; its context goes as on abort.
CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  ccltune::shim::Release(comm, "revoked", /*abort=*/true, /*forget=*/false);
  return real::ncclCommRevoke(comm, revokeFlags);
}

// PyTorch's watchdog polls this: ncclRemoteError makes it abort the process group.
CCLTUNE_SHIM_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (ccltune::shim::AsyncErrorOf(comm, asyncError)) return ncclSuccess;
  return real::ncclCommGetAsyncError(comm, asyncError);
}

CCLTUNE_SHIM_EXPORT const char* ncclGetLastError(ncclComm_t comm) {
  if (const char* ours = ccltune::shim::LastFailureText(comm)) return ours;
  return real::ncclGetLastError(comm);
}
