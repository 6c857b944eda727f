// reduceScatter `direct` and the direct reduce-scatter building block: one step in which
// every rank sends block k to rank k; the owner reduces the blocks in rank order.
#include <cstring>
#include <vector>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status DirectReduceScatter(HostComm& c, const CollArgs& a, const std::byte* in,
                                 std::byte* out, const Blocks& blocks, int step) {
  const int n = c.world();
  const int r = c.rank();
  const std::size_t mine = blocks.size(r) * a.elem;
  std::byte* gather = c.Scratch(1, mine * static_cast<std::size_t>(n));
  // Own block into its slot first: `out` may overlap `in`.
  std::memcpy(gather + r * mine, in + blocks.off(r) * a.elem, mine);
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  for (int p = 0; p < n; ++p) {
    if (p == r) continue;
    sends.push_back({p, in + blocks.off(p) * a.elem, blocks.size(p) * a.elem});
    recvs.push_back({p, gather + p * mine, mine});
  }
  CCLTUNE_RETURN_IF_ERROR(c.Exchange(sends, recvs, step));
  std::memcpy(out, gather, mine);
  for (int p = 1; p < n; ++p) a.reduce(out, out, gather + p * mine, blocks.size(r));
  return core::Status::Ok();
}

core::Status ReduceScatterDirect(HostComm& c, const CollArgs& a) {
  return DirectReduceScatter(c, a, static_cast<const std::byte*>(a.send),
                             static_cast<std::byte*>(a.recv), Blocks::Uniform(a.count, c.world()),
                             0);
}

}  // namespace ccltune::worker::host
