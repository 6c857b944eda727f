// broadcast `binomial`: a binomial tree rooted at `root` (ranks renumbered relative to it).
// A rank receives once from its parent (relative rank minus its lowest set bit), then sends
// to its children with decreasing distance; the step number is the bit of the edge.
#include <cstring>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {
namespace {

int BitIndex(int mask) { return __builtin_ctz(static_cast<unsigned>(mask)); }

}  // namespace

core::Status BroadcastBinomial(HostComm& c, const CollArgs& a) {
  const int n = c.world();
  const int vr = Mod(c.rank() - a.root, n);
  const std::size_t bytes = a.count * a.elem;
  if (vr == 0 && a.send != a.recv) std::memcpy(a.recv, a.send, bytes);
  int mask = 1;
  while (mask < n) {
    if (vr & mask) {
      const RecvOp rcv{Mod(vr - mask + a.root, n), a.recv, bytes};
      CCLTUNE_RETURN_IF_ERROR(c.Exchange({}, {&rcv, 1}, BitIndex(mask)));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask >= n) continue;
    const SendOp snd{Mod(vr + mask + a.root, n), a.recv, bytes};
    CCLTUNE_RETURN_IF_ERROR(c.Exchange({&snd, 1}, {}, BitIndex(mask)));
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
