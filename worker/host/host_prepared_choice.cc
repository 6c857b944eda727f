#include "worker/host/host_prepared_choice.h"

#include <algorithm>
#include <cstring>

#include "worker/host/reference_check.h"

namespace ccltune::worker::host {
namespace {

constexpr std::size_t kMaxBufferSets = 8;
// Verification data never repeats a timing buffer's data.
constexpr std::uint64_t kVerifyGeneration = std::uint64_t{1} << 32;

std::size_t SendCount(core::Op op, std::size_t count, int world) {
  const bool split = op == core::Op::kReduceScatter || op == core::Op::kAllToAll;
  return split ? count * static_cast<std::size_t>(world) : count;
}

}  // namespace

HostPreparedChoice::HostPreparedChoice(HostComm& comm, const Algorithm& algo,
                                       const core::Problem& problem, std::size_t count,
                                       ReduceFn reduce, std::size_t cache_budget_bytes,
                                       double added_op_seconds)
    : comm_(comm),
      algo_(algo),
      added_op_seconds_(algo.test_added_op_seconds + added_op_seconds),
      problem_(problem),
      count_(count),
      reduce_(reduce) {
  const std::size_t elem = core::DtypeSize(problem.dtype);
  const std::size_t send = SendCount(problem.op, count, comm.world()) * elem;
  const std::size_t recv = OutputCount(problem.op, count, comm.world()) * elem;
  // Rotate only when several sets fit the cache: then a small size does not measure the
  // cache alone. A set larger than half the budget misses the cache by itself.
  const std::size_t per_set = send + recv;
  const std::size_t n_sets = per_set * 2 <= cache_budget_bytes
                                 ? std::min(kMaxBufferSets, cache_budget_bytes / per_set)
                                 : 1;
  sets_.resize(n_sets);
  for (std::size_t k = 0; k < n_sets; ++k) {
    sets_[k].send.resize(send);
    sets_[k].recv.resize(recv);
    FillInput(sets_[k].send.data(), problem.dtype, SeedFor(comm.rank(), k), send / elem);
  }
}

std::uint64_t HostPreparedChoice::SeedFor(int rank, std::uint64_t generation) const {
  return MakeSeed(
      SeedInput{problem_.op, problem_.dtype, problem_.redop, problem_.bytes, rank, generation});
}

core::Status HostPreparedChoice::RunOnce(BufferSet& set, Deadline deadline) {
  CollArgs args;
  args.op = problem_.op;
  args.dtype = problem_.dtype;
  args.redop = problem_.redop;
  args.send = set.send.data();
  args.recv = set.recv.data();
  args.count = count_;
  args.elem = core::DtypeSize(problem_.dtype);
  args.reduce = reduce_;
  return comm_.Run(core::OpName(problem_.op), algo_.name, algo_.run, args, deadline);
}

core::Status HostPreparedChoice::Warmup(int iters, Deadline deadline) {
  for (int i = 0; i < iters; ++i) {
    CCLTUNE_RETURN_IF_ERROR(RunOnce(sets_[next_set_++ % sets_.size()], deadline));
  }
  return core::Status::Ok();
}

core::Result<double> HostPreparedChoice::TimedRound(int iters, Deadline deadline) {
  if (iters < 1) return core::InvalidArgument("iters must be >= 1, got " + std::to_string(iters));
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < iters; ++i) {
    CCLTUNE_RETURN_IF_ERROR(RunOnce(sets_[next_set_++ % sets_.size()], deadline));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count() / iters;
  return seconds * algo_.test_time_scale + added_op_seconds_;
}

core::Status HostPreparedChoice::Verify(Deadline deadline) {
  const std::uint64_t generation = kVerifyGeneration + verify_runs_++;
  BufferSet& set = sets_[0];
  const std::size_t elem = core::DtypeSize(problem_.dtype);
  FillInput(set.send.data(), problem_.dtype, SeedFor(comm_.rank(), generation),
            set.send.size() / elem);
  // A pattern no input or result can have, so an unwritten element cannot pass.
  std::memset(set.recv.data(), 0xA5, set.recv.size());
  CCLTUNE_RETURN_IF_ERROR(RunOnce(set, deadline));
  CheckSpec spec{problem_.op, problem_.dtype, problem_.redop, count_, comm_.rank(), 0, {}};
  for (int r = 0; r < comm_.world(); ++r) spec.seeds.push_back(SeedFor(r, generation));
  return CheckOutput(spec, set.recv.data())
      .WithContext(std::string(core::OpName(problem_.op)) + " " + algo_.name + " on rank " +
                   std::to_string(comm_.rank()));
}

}  // namespace ccltune::worker::host
