// `test-hang` (test-only choice): the hang rank stops communicating — it polls the deadline
// and the token instead — so every other rank times out waiting for it. Exercises the
// abort-and-continue path (Timeout, Recover, next choice) end to end.
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "worker/host/algorithms.h"

namespace ccltune::worker::host {

core::Status TestHang(HostComm& c, const CollArgs& a) {
  const std::string me = "rank " + std::to_string(c.rank());
  if (c.rank() == c.test_hang_rank()) {
    for (;;) {
      const core::Status st = c.cancel().Check();
      if (!st.ok()) return st.WithContext(me + ": test-hang");
      if (Expired(c.deadline())) {
        return core::TimeoutError(me + ": test-hang blocked in " + core::OpName(a.op) +
                                  " until the deadline, as asked");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // Everyone else exchanges a token with every peer; the hang rank never answers.
  const std::int32_t mine = c.rank();
  std::vector<std::int32_t> theirs(c.world());
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
  for (int p = 0; p < c.world(); ++p) {
    if (p == c.rank()) continue;
    sends.push_back({p, &mine, sizeof(mine)});
    recvs.push_back({p, &theirs[p], sizeof(std::int32_t)});
  }
  return c.Exchange(sends, recvs, 0);
}

}  // namespace ccltune::worker::host
