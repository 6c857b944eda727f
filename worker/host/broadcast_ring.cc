// broadcast `ring`: a pipelined chain root -> root+1 -> ... in chunks of up to 128 KiB.
// Chunk c crosses the edge out of relative rank v at step c + v, so at step t a middle rank
// receives chunk t-v+1 from its left while it forwards chunk t-v to its right.
#include <algorithm>
#include <cstring>
#include <vector>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {
namespace {

constexpr std::size_t kChunkBytes = 128 << 10;

}  // namespace

core::Status BroadcastRing(HostComm& c, const CollArgs& a) {
  const int n = c.world();
  const int v = Mod(c.rank() - a.root, n);
  const std::size_t bytes = a.count * a.elem;
  auto* buf = static_cast<std::byte*>(a.recv);
  if (v == 0 && a.send != a.recv) std::memcpy(buf, a.send, bytes);
  const std::size_t chunk = std::max<std::size_t>(a.elem, kChunkBytes / a.elem * a.elem);
  const int chunks = static_cast<int>((bytes + chunk - 1) / chunk);
  const int left = Mod(c.rank() - 1, n);
  const int right = Mod(c.rank() + 1, n);
  auto piece = [&](int k) { return std::min(chunk, bytes - static_cast<std::size_t>(k) * chunk); };
  for (int t = std::max(v - 1, 0); t <= v + chunks - 1; ++t) {
    const int in = t - v + 1;  // chunk arriving from the left at step t
    const int out = t - v;     // chunk leaving to the right at step t
    std::vector<RecvOp> recvs;
    std::vector<SendOp> sends;
    if (v > 0 && in >= 0 && in < chunks) recvs.push_back({left, buf + in * chunk, piece(in)});
    if (v < n - 1 && out >= 0 && out < chunks)
      sends.push_back({right, buf + out * chunk, piece(out)});
    if (recvs.empty() && sends.empty()) continue;
    CCLTUNE_RETURN_IF_ERROR(c.Exchange(sends, recvs, t));
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
