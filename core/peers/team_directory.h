// A PeerDirectory for a team of some of the job's ranks (the ranks of one node, for the
// hierarchical all-reduce's peer memory), over the job's directory: each exchange is the
// parent's AllGatherAmong the team, under a name of the team's namespace, so teams never see
// each other's values. Over Redis only the team's ranks take part; over a directory that
// gathers job-wide (PeerDirectory's default) every rank of the job must make the same calls.
// Blocking, bounded by each call's deadline; the parent must outlive it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/peers/peer_directory.h"

namespace ccltune::core {

class TeamDirectory final : public PeerDirectory {
 public:
  // `members`: the team's ranks in the job, in team-rank order (this rank among them);
  // `ns`: the names' prefix, distinct from every name the parent serves otherwise (and, over
  // a Redis directory, from every other team's).
  TeamDirectory(PeerDirectory& parent, std::vector<int> members, std::string ns)
      : parent_(parent), members_(std::move(members)), ns_(std::move(ns)) {}

  // Values indexed by team rank.
  Result<std::vector<std::string>> AllGather(const std::string& name, const std::string& mine,
                                             Deadline deadline) override;
  // `root` is a team rank.
  Result<std::string> Broadcast(const std::string& name, int root,
                                const std::optional<std::string>& value,
                                Deadline deadline) override;

 private:
  PeerDirectory& parent_;
  std::vector<int> members_;
  std::string ns_;
};

}  // namespace ccltune::core
