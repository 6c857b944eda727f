// allReduce `direct`: every rank sends its whole buffer to every other rank (one step) and
// reduces all of them locally in rank order: same inputs, same order, identical bytes.
#include <cstring>
#include <vector>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status AllReduceDirect(HostComm& c, const CollArgs& a) {
  const int n = c.world();
  const int r = c.rank();
  const std::size_t bytes = a.count * a.elem;
  std::byte* gather = c.Scratch(1, bytes * static_cast<std::size_t>(n));
  // Own input into its slot first: send and recv may be the same buffer.
  std::memcpy(gather + r * bytes, a.send, bytes);
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  for (int p = 0; p < n; ++p) {
    if (p == r) continue;
    sends.push_back({p, a.send, bytes});
    recvs.push_back({p, gather + p * bytes, bytes});
  }
  CCLTUNE_RETURN_IF_ERROR(c.Exchange(sends, recvs, 0));
  std::memcpy(a.recv, gather, bytes);
  for (int p = 1; p < n; ++p) a.reduce(a.recv, a.recv, gather + p * bytes, a.count);
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
