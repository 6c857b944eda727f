// allToAll `direct`: one step, every block posted to its rank at once; the progress engine
// moves them all together.
#include <cstring>
#include <vector>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status AllToAllDirect(HostComm& c, const CollArgs& a) {
  const int r = c.rank();
  const std::size_t blk = a.count * a.elem;
  const auto* in = static_cast<const std::byte*>(a.send);
  auto* out = static_cast<std::byte*>(a.recv);
  std::memcpy(out + r * blk, in + r * blk, blk);
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  for (int p = 0; p < c.world(); ++p) {
    if (p == r) continue;
    sends.push_back({p, in + p * blk, blk});
    recvs.push_back({p, out + p * blk, blk});
  }
  return c.Exchange(sends, recvs, 0);
}

}  // namespace ccltune::worker::host
