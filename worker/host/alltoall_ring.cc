// allToAll `ring`: store-and-forward around the ring, neighbours only. At step s rank r
// sends its right neighbour the blocks of origin r-s+1 bound for r+1 .. r+n-s, and receives
// from its left those of origin r-s bound for r .. r+n-s-1: it keeps the one for itself and
// forwards the rest at step s+1. Each block travels (distance) hops, n(n-1)/2 per link.
#include <cstring>
#include <vector>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status AllToAllRing(HostComm& c, const CollArgs& a) {
  const int n = c.world();
  const int r = c.rank();
  const std::size_t blk = a.count * a.elem;
  const auto* in = static_cast<const std::byte*>(a.send);
  auto* out = static_cast<std::byte*>(a.recv);
  std::memcpy(out + r * blk, in + r * blk, blk);
  // Staging for blocks in transit, slot k = the block bound for r+k; two generations.
  std::byte* stage[2] = {c.Scratch(0, blk * n), c.Scratch(1, blk * n)};
  for (int s = 1; s < n; ++s) {
    std::vector<SendOp> sends;
    std::vector<RecvOp> recvs;
    for (int k = 1; k <= n - s; ++k) {  // bound for r+k
      const std::byte* src = s == 1 ? in + Mod(r + k, n) * blk : stage[(s - 1) % 2] + k * blk;
      sends.push_back({Mod(r + 1, n), src, blk});
    }
    recvs.push_back({Mod(r - 1, n), out + Mod(r - s, n) * blk, blk});  // bound for r
    for (int k = 1; k < n - s; ++k) recvs.push_back({Mod(r - 1, n), stage[s % 2] + k * blk, blk});
    CCLTUNE_RETURN_IF_ERROR(c.Exchange(sends, recvs, s));
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
