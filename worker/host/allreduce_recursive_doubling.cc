// allReduce `recursive-doubling`: log2(p) full-buffer exchanges with partner rank^mask.
// Non-power-of-two world sizes fold first: of the first 2*rem ranks (rem = world - p) each
// even rank hands its buffer to the odd rank above it and sits out, getting the result back
// at the end. Partners combine as op(lower rank's value, higher rank's value), so both
// compute identical bytes.
#include <cstring>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {
namespace {

int FloorPow2(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

}  // namespace

core::Status AllReduceRecursiveDoubling(HostComm& c, const CollArgs& a) {
  const int n = c.world();
  const int r = c.rank();
  const std::size_t bytes = a.count * a.elem;
  auto* buf = static_cast<std::byte*>(a.recv);
  if (a.send != a.recv) std::memcpy(buf, a.send, bytes);
  std::byte* tmp = c.Scratch(0, bytes);
  const int p = FloorPow2(n);
  const int rem = n - p;
  const bool folded_out = r < 2 * rem && r % 2 == 0;
  if (r < 2 * rem) {  // fold: step 0
    const SendOp s{r + 1, buf, bytes};
    const RecvOp v{r - 1, tmp, bytes};
    CCLTUNE_RETURN_IF_ERROR(folded_out ? c.Exchange({&s, 1}, {}, 0) : c.Exchange({}, {&v, 1}, 0));
    if (!folded_out) a.reduce(buf, tmp, buf, a.count);
  }
  int step = 1;
  if (!folded_out) {
    const int vrank = r < 2 * rem ? r / 2 : r - rem;
    for (int mask = 1; mask < p; mask <<= 1, ++step) {
      const int vpartner = vrank ^ mask;
      const int partner = vpartner < rem ? vpartner * 2 + 1 : vpartner + rem;
      const SendOp s{partner, buf, bytes};
      const RecvOp v{partner, tmp, bytes};
      CCLTUNE_RETURN_IF_ERROR(c.Exchange({&s, 1}, {&v, 1}, step));
      if (partner < r) {
        a.reduce(buf, tmp, buf, a.count);
      } else {
        a.reduce(buf, buf, tmp, a.count);
      }
    }
  } else {
    for (int mask = 1; mask < p; mask <<= 1) ++step;
  }
  if (r < 2 * rem) {  // unfold: the odd rank returns the result
    const SendOp s{r - 1, buf, bytes};
    const RecvOp v{r + 1, buf, bytes};
    return folded_out ? c.Exchange({}, {&v, 1}, step) : c.Exchange({&s, 1}, {}, step);
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker::host
