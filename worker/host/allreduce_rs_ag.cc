// allReduce `rs+ag`: direct reduce-scatter (one step, every block reduced in rank order on
// its owner) then ring all-gather.
#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status AllReduceRsAg(HostComm& c, const CollArgs& a) {
  auto* buf = static_cast<std::byte*>(a.recv);
  const Blocks blocks = Blocks::Balanced(a.count, c.world());
  const std::byte* in = static_cast<const std::byte*>(a.send);
  CCLTUNE_RETURN_IF_ERROR(
      DirectReduceScatter(c, a, in, buf + blocks.off(c.rank()) * a.elem, blocks, 0));
  return RingAllGather(c, buf, blocks, a.elem, 1);
}

}  // namespace ccltune::worker::host
