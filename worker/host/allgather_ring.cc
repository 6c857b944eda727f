// allGather `ring` and the ring all-gather building block: at step s rank r forwards block
// r-s to its right neighbour and receives block r-s-1 from its left, straight into place.
#include <cstring>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status RingAllGather(HostComm& c, std::byte* buf, const Blocks& blocks, std::size_t elem,
                           int first_step) {
  const int n = c.world();
  const int r = c.rank();
  for (int s = 0; s + 1 < n; ++s) {
    const int sb = Mod(r - s, n);
    const int rb = Mod(r - s - 1, n);
    const SendOp snd{Mod(r + 1, n), buf + blocks.off(sb) * elem, blocks.size(sb) * elem};
    const RecvOp rcv{Mod(r - 1, n), buf + blocks.off(rb) * elem, blocks.size(rb) * elem};
    CCLTUNE_RETURN_IF_ERROR(c.Exchange({&snd, 1}, {&rcv, 1}, first_step + s));
  }
  return core::Status::Ok();
}

core::Status AllGatherRing(HostComm& c, const CollArgs& a) {
  auto* buf = static_cast<std::byte*>(a.recv);
  const Blocks blocks = Blocks::Uniform(a.count, c.world());
  std::memmove(buf + blocks.off(c.rank()) * a.elem, a.send, a.count * a.elem);
  return RingAllGather(c, buf, blocks, a.elem, 0);
}

}  // namespace ccltune::worker::host
