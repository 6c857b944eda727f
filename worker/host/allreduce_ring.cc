// allReduce `ring`: ring reduce-scatter then ring all-gather over world-size blocks
// (balanced when the count does not divide). Each block is reduced on one rank and then
// copied, so every rank ends with identical bytes.
#include <cstring>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status AllReduceRing(HostComm& c, const CollArgs& a) {
  auto* buf = static_cast<std::byte*>(a.recv);
  if (a.send != a.recv) std::memcpy(buf, a.send, a.count * a.elem);
  const Blocks blocks = Blocks::Balanced(a.count, c.world());
  CCLTUNE_RETURN_IF_ERROR(RingReduceScatter(c, a, buf, blocks));
  return RingAllGather(c, buf, blocks, a.elem, c.world() - 1);
}

}  // namespace ccltune::worker::host
