#include "worker/host/host_comm.h"

#include <algorithm>

namespace ccltune::worker::host {

Blocks Blocks::Balanced(std::size_t count, int world) {
  Blocks b;
  const auto n = static_cast<std::size_t>(world);
  for (std::size_t k = 0; k <= n; ++k) b.start.push_back(count * k / n);
  return b;
}

Blocks Blocks::Uniform(std::size_t per_block, int world) {
  Blocks b;
  for (std::size_t k = 0; k <= static_cast<std::size_t>(world); ++k)
    b.start.push_back(k * per_block);
  return b;
}

std::size_t Blocks::max_size() const {
  std::size_t m = 0;
  for (std::size_t k = 0; k + 1 < start.size(); ++k) m = std::max(m, start[k + 1] - start[k]);
  return m;
}

HostComm::HostComm(std::unique_ptr<TcpMesh> mesh, int world, const CancelToken& cancel,
                   int test_hang_rank)
    : mesh_(std::move(mesh)),
      rank_(mesh_ ? mesh_->rank() : 0),
      world_(world),
      cancel_(cancel),
      test_hang_rank_(test_hang_rank) {}

void HostComm::Reset(std::unique_ptr<TcpMesh> mesh) {
  mesh_ = std::move(mesh);
  seq_ = 0;
}

core::Status HostComm::Run(const char* op_label, const char* algo_label, AlgoFn fn,
                           const CollArgs& args, Deadline deadline) {
  if (!mesh_) {
    return core::FailedPrecondition("rank " + std::to_string(rank_) +
                                    ": no host mesh (the last Recover failed)");
  }
  ++seq_;
  wait_ = WaitSpec{deadline, &cancel_, StepLabel{op_label, algo_label, 0}};
  core::Status st = fn(*this, args);
  if (!st.ok()) {
    mesh_->MarkBroken(st.ToString());
    return st;
  }
  // Every algorithm sums for avg (GetReduceFn); the division ends it, on each rank's own
  // result: allReduce's whole output, reduceScatter's block.
  if (args.redop == core::RedOp::kAvg) DivideInPlace(args.dtype, args.recv, args.count, world_);
  return st;
}

core::Status HostComm::Exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs,
                                int step) {
  wait_.label.step = step;
  return mesh_->Exchange(sends, recvs, seq_, static_cast<std::uint32_t>(step), wait_);
}

std::byte* HostComm::Scratch(int slot, std::size_t bytes) {
  std::vector<std::byte>& s = scratch_[slot];
  if (s.size() < bytes) s.resize(bytes);
  return s.data();
}

}  // namespace ccltune::worker::host
