// allToAll `pairwise`: world-1 steps; at step s rank r sends block r+s to rank r+s and
// receives block r-s from rank r-s, so each step is one send and one receive per rank.
#include <cstring>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status AllToAllPairwise(HostComm& c, const CollArgs& a) {
  const int n = c.world();
  const int r = c.rank();
  const std::size_t blk = a.count * a.elem;
  const auto* in = static_cast<const std::byte*>(a.send);
  auto* out = static_cast<std::byte*>(a.recv);
  std::memcpy(out + r * blk, in + r * blk, blk);
  for (int s = 1; s < n; ++s) {
    const int to = Mod(r + s, n);
    const int from = Mod(r - s, n);
    const SendOp snd{to, in + to * blk, blk};
    const RecvOp rcv{from, out + from * blk, blk};
    CCLTUNE_RETURN_IF_ERROR(c.Exchange({&snd, 1}, {&rcv, 1}, s));
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
