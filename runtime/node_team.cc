// The hierarchical all-reduce's node team (runtime_comm.h, issue 33): built at init, only when
// the ranks span nodes of equal rank counts (PlanNodeTeam) and the table every rank agreed on
// applies `hier` at some size, so every rank takes the same steps:
//   1. two blocking splits of the application's communicator, collective over every rank:
//      by node (the node's exchanges run over it, so they never wait on another node) and
//      by local rank (hier's NCCL phase across the nodes);
//   2. the node's peer memory, probed and reserved over the node's communicator alone
//      (stagingBytes per rank: the scratch hier calls copy their buffers through);
//   3. one exchange over every rank: hier runs on every rank or on none, so any rank's
//      problem turns it off everywhere and the table is rebuilt without it.
// Never fails init for a problem of its own: it becomes the summary's reason. Step 2 gets
// half of what is left of init's time, so a node that hangs there still leaves time for
// step 3 (its communicators are aborted first, which frees the stream both directories use).
#include "core/gpu/nccl_api.h"
#include "core/peers/peer_directory.h"
#include "runtime/runtime_comm.h"
#include "runtime/waits.h"

namespace ccltune::runtime {

core::Status RuntimeComm::SetUpNodeTeam(const NodeTeamPlan& plan,
                                        const std::vector<apply::WinnerRecord>& records,
                                        core::Deadline deadline) {
  if (!plan.why_not.empty()) return core::Status::Ok();
  if (!table_.HierNeeded()) {
    caps_.hier_problem = "no tuned size applies it";
    return core::Status::Ok();  // the table is the same without it
  }
  place_ = plan.place;
  const core::Deadline team_deadline = core::Clock::now() + (deadline - core::Clock::now()) / 2;
  const core::Status built = BuildNodeTeam(team_deadline);
  if (!built.ok()) AbortNodeTeam();
  CCLTUNE_ASSIGN_OR_RETURN(
      caps_.hier_problem,
      core::FirstRankProblem(*dir_, "node-team", built.message(), "node", deadline));
  if (HierOn()) return core::Status::Ok();
  AbortNodeTeam();
  table_ = DispatchTable::Build(records, caps_);
  return AgreeOnTable(deadline);
}

core::Status RuntimeComm::BuildNodeTeam(core::Deadline deadline) {
  // Both, whatever the first gave: a rank that skipped the second would leave every other
  // rank blocked in it.
  core::Result<ncclComm_t> node = SplitBlocking(place_.node, place_.local_rank, 0);
  core::Result<ncclComm_t> across = SplitBlocking(place_.local_rank, place_.node, 0);
  if (node.ok()) node_comm_ = *node;
  if (across.ok()) across_comm_ = *across;
  CCLTUNE_RETURN_IF_ERROR(node.status().WithContext("split by node"));
  CCLTUNE_RETURN_IF_ERROR(across.status().WithContext("split by local rank"));
  const int ranks = static_cast<int>(place_.node_ranks.size());
  node_dir_ = std::make_unique<NcclDirectory>(node_comm_, place_.local_rank, ranks, stream_.get());
  CCLTUNE_ASSIGN_OR_RETURN(node_peers_, gpu::PeerMemory::Probe(place_.local_rank, ranks, *node_dir_,
                                                               stream_.get(), deadline));
  if (!node_peers_->usable()) return core::FailedPrecondition(node_peers_->problem());
  CCLTUNE_RETURN_IF_ERROR(node_peers_->Reserve(config_.staging_bytes, deadline));
  return WaitStream(stream_.get(), node_comm_, deadline, "node team setup");
}

// Not destroyed: a node exchange may still be pending on them; abort never waits for peers.
// The node's peer memory stays until this object goes (a peer may still map it).
void RuntimeComm::AbortNodeTeam() {
  for (ncclComm_t* c : {&node_comm_, &across_comm_}) {
    if (*c != nullptr) (void)gpu::Nccl().CommAbort(*c);
    *c = nullptr;
  }
}

}  // namespace ccltune::runtime
