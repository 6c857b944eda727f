// broadcast `direct`: the root sends its buffer to every other rank in one step.
#include <cstring>
#include <vector>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status BroadcastDirect(HostComm& c, const CollArgs& a) {
  const std::size_t bytes = a.count * a.elem;
  if (c.rank() != a.root) {
    const RecvOp rcv{a.root, a.recv, bytes};
    return c.Exchange({}, {&rcv, 1}, 0);
  }
  if (a.send != a.recv) std::memcpy(a.recv, a.send, bytes);
  std::vector<SendOp> sends;
  for (int p = 0; p < c.world(); ++p) {
    if (p != a.root) sends.push_back({p, a.recv, bytes});
  }
  return c.Exchange(sends, {}, 0);
}

}  // namespace ccltune::worker::host
