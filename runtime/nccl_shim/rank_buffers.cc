// Reachability of one call's buffers (rank_buffers.h).
#include "runtime/nccl_shim/rank_buffers.h"

#include "core/gpu/direct_peer.h"

namespace ccltune::shim {

bool CallReachable(const runtime::Call& c, const std::vector<int>& devices) {
  const int world = static_cast<int>(devices.size());
  const std::size_t esize = core::DtypeSize(*c.dtype);
  return gpu::ReachableFrom(c.send, runtime::SendElems(c.op, c.count, world) * esize, devices) &&
         gpu::ReachableFrom(c.recv, runtime::RecvElems(c.op, c.count, world) * esize, devices);
}

}  // namespace ccltune::shim
