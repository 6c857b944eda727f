// reduceScatter `ring` and the ring reduce-scatter building block. At step s rank r sends
// block r-s-1 to its right neighbour and folds block r-s-2 from its left neighbour into its
// own: op(partial from the left, own value). After world-1 steps block r is complete on r.
#include <cstring>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status RingReduceScatter(HostComm& c, const CollArgs& a, std::byte* work,
                               const Blocks& blocks) {
  const int n = c.world();
  const int r = c.rank();
  std::byte* tmp = c.Scratch(0, blocks.max_size() * a.elem);
  for (int s = 0; s + 1 < n; ++s) {
    const int sb = Mod(r - s - 1, n);
    const int rb = Mod(r - s - 2, n);
    std::byte* own = work + blocks.off(rb) * a.elem;
    const SendOp snd{Mod(r + 1, n), work + blocks.off(sb) * a.elem, blocks.size(sb) * a.elem};
    const RecvOp rcv{Mod(r - 1, n), tmp, blocks.size(rb) * a.elem};
    CCLTUNE_RETURN_IF_ERROR(c.Exchange({&snd, 1}, {&rcv, 1}, s));
    a.reduce(own, tmp, own, blocks.size(rb));
  }
  return core::Status::Ok();
}

core::Status ReduceScatterRing(HostComm& c, const CollArgs& a) {
  const auto n = static_cast<std::size_t>(c.world());
  std::byte* work = c.Scratch(1, a.count * n * a.elem);
  std::memcpy(work, a.send, a.count * n * a.elem);
  const Blocks blocks = Blocks::Uniform(a.count, c.world());
  CCLTUNE_RETURN_IF_ERROR(RingReduceScatter(c, a, work, blocks));
  std::memcpy(a.recv, work + blocks.off(c.rank()) * a.elem, a.count * a.elem);
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
