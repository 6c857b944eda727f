// HostComm: the communicator the host algorithms run on — a TcpMesh plus the collective
// sequence number, the current wait (deadline, token, label) and reusable scratch memory.
// Algorithms see only Exchange(step) and Scratch(); one file per algorithm fills AlgoFn.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/base/status.h"
#include "core/plan/types.h"
#include "worker/deadline.h"
#include "worker/host/reduce_kernels.h"
#include "worker/host/tcp_mesh.h"

namespace ccltune::worker::host {

// One collective call. Buffer sizes in elements (count = core::ElementCount):
// allReduce, broadcast: send count, recv count; allGather: send count, recv count*world;
// reduceScatter: send count*world, recv count; allToAll: send and recv count*world.
struct CollArgs {
  core::Op op = core::Op::kAllReduce;
  core::Dtype dtype = core::Dtype::kFp32;
  core::RedOp redop = core::RedOp::kNone;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  std::size_t elem = 0;       // core::DtypeSize(dtype)
  ReduceFn reduce = nullptr;  // reducing ops only
  int root = 0;               // broadcast
};

class HostComm;
using AlgoFn = core::Status (*)(HostComm& comm, const CollArgs& args);

// Block layout of a buffer split over the ranks, in elements: block k = [start[k], start[k+1]).
struct Blocks {
  std::vector<std::size_t> start;
  // Counts not divisible by the world size: block sizes differ by at most one (may be 0).
  static Blocks Balanced(std::size_t count, int world);
  static Blocks Uniform(std::size_t per_block, int world);
  std::size_t off(int k) const { return start[k]; }
  std::size_t size(int k) const { return start[k + 1] - start[k]; }
  std::size_t max_size() const;
};

class HostComm {
 public:
  HostComm(std::unique_ptr<TcpMesh> mesh, int world, const CancelToken& cancel, int test_hang_rank);
  int rank() const { return rank_; }
  int world() const { return world_; }
  int test_hang_rank() const { return test_hang_rank_; }
  const CancelToken& cancel() const { return cancel_; }
  Deadline deadline() const { return wait_.deadline; }
  TcpMesh* mesh() { return mesh_.get(); }

  // Replaces the mesh (a new epoch): the sequence numbers start over. nullptr drops it.
  void Reset(std::unique_ptr<TcpMesh> mesh);

  // Runs one collective under `deadline`; any failure breaks the mesh (Recover next).
  core::Status Run(const char* op_label, const char* algo_label, AlgoFn fn, const CollArgs& args,
                   Deadline deadline);

  // For algorithms: one step of the running collective.
  core::Status Exchange(std::span<const SendOp> sends, std::span<const RecvOp> recvs, int step);
  // Reusable scratch memory; slot 0 and 1 are independent. Valid until the next call with
  // the same slot.
  std::byte* Scratch(int slot, std::size_t bytes);

 private:
  std::unique_ptr<TcpMesh> mesh_;
  int rank_;
  int world_;
  const CancelToken& cancel_;
  int test_hang_rank_;
  std::uint32_t seq_ = 0;
  WaitSpec wait_;
  std::vector<std::byte> scratch_[2];
};

}  // namespace ccltune::worker::host
