// Every rank's buffers of one collective, by rank, for ranks that are threads or devices of
// one process (nccl-tests -t N or -g N, programs on ncclCommInitAll). Handed to the call
// (runtime::Call::peer_send), they let the pull kernels read and write the peers' own
// buffers as they do ccltuneMemAlloc's pooled ones, so the sizes where pull wins are served
// without the application allocating from our pool. Learnt two ways: a group holds every
// rank's call (group_calls.cc); threads post theirs on the clique's board (buffer_board.h).
//
// Only for calls being captured into a CUDA graph. Learning them costs host time per call
// (driver queries of every buffer, the threads meeting on the board): a captured graph pays
// it once, an eager call every time, and on 4 H100s with nccl-tests -t 4 that made eager
// calls cost 24-33 us at every size up to 1 MiB (NCCL's own took 8-21 us), while the
// winners were tuned on device time. Eager calls keep the choices that need nothing shared.
#pragma once

#include <vector>

#include "runtime/runtime_comm.h"

namespace ccltune::shim {

struct RankBuffers {
  std::vector<const void*> send;
  std::vector<void*> recv;

  // `c` carrying these buffers: valid while this object lives.
  runtime::Call With(const runtime::Call& c) const {
    runtime::Call out = c;
    out.peer_send = send.data();
    out.peer_recv = recv.data();
    return out;
  }
};

// Whether both of `c`'s buffers lie in memory every device of `devices` reaches as it is
// (core/gpu/direct_peer.h). Driver queries only.
bool CallReachable(const runtime::Call& c, const std::vector<int>& devices);

}  // namespace ccltune::shim
