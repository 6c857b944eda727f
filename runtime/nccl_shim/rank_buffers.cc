// Buffer sizes and reachability of one call (rank_buffers.h).
#include "runtime/nccl_shim/rank_buffers.h"

#include "core/gpu/direct_peer.h"

namespace ccltune::shim {

std::pair<std::size_t, std::size_t> BufferBytes(const runtime::Call& c, int world) {
  const std::size_t block = c.count * core::DtypeSize(*c.dtype);
  const std::size_t n = static_cast<std::size_t>(world);
  return {c.op == core::Op::kReduceScatter ? block * n : block,
          c.op == core::Op::kAllGather ? block * n : block};
}

bool CallReachable(const runtime::Call& c, const std::vector<int>& devices) {
  const auto [send_bytes, recv_bytes] = BufferBytes(c, static_cast<int>(devices.size()));
  return gpu::ReachableFrom(c.send, send_bytes, devices) &&
         gpu::ReachableFrom(c.recv, recv_bytes, devices);
}

}  // namespace ccltune::shim
