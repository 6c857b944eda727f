// allGather `direct` and the direct all-gather building block: one step, every rank sends
// its block to every other rank and receives each block straight into place.
#include <cstring>
#include <vector>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status DirectAllGather(HostComm& c, std::byte* buf, const Blocks& blocks, std::size_t elem,
                             int step) {
  const int r = c.rank();
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  for (int p = 0; p < c.world(); ++p) {
    if (p == r) continue;
    sends.push_back({p, buf + blocks.off(r) * elem, blocks.size(r) * elem});
    recvs.push_back({p, buf + blocks.off(p) * elem, blocks.size(p) * elem});
  }
  return c.Exchange(sends, recvs, step);
}

core::Status AllGatherDirect(HostComm& c, const CollArgs& a) {
  auto* buf = static_cast<std::byte*>(a.recv);
  const Blocks blocks = Blocks::Uniform(a.count, c.world());
  std::memmove(buf + blocks.off(c.rank()) * a.elem, a.send, a.count * a.elem);
  return DirectAllGather(c, buf, blocks, a.elem, 0);
}

}  // namespace ccltune::worker::host
