// How a backend finds its peers: a small exchange of strings among the ranks of an
// attempt (host listen addresses, the ncclUniqueId), implemented over Redis by Rendezvous.
// Blocking; each call waits at most until the deadline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/deadline.h"
#include "core/base/status.h"

namespace ccltune::core {

class PeerDirectory {
 public:
  virtual ~PeerDirectory() = default;
  // Every rank contributes `mine` under `name`; returns all values indexed by rank.
  virtual core::Result<std::vector<std::string>> AllGather(const std::string& name,
                                                           const std::string& mine,
                                                           Deadline deadline) = 0;
  // Rank `root` provides the value; every rank (root too) gets it.
  virtual core::Result<std::string> Broadcast(const std::string& name, int root,
                                              const std::optional<std::string>& value,
                                              Deadline deadline) = 0;
  // AllGather among `members` (ranks of the job, this one among them): their values in the
  // order of `members`. Every member passes the same name and members. Directories that can
  // wait for some ranks only (Redis) override it, so ranks outside need not take part; this
  // default gathers over the whole job (every rank must then call it, with the same name).
  virtual core::Result<std::vector<std::string>> AllGatherAmong(const std::string& name,
                                                                const std::string& mine,
                                                                const std::vector<int>& members,
                                                                Deadline deadline);
};

// `all` (indexed by rank) reduced to `members`' values; InvalidArgument for a rank outside.
core::Result<std::vector<std::string>> ValuesOfMembers(const std::vector<std::string>& all,
                                                       const std::vector<int>& members,
                                                       const std::string& name);

// One verdict for every rank of `dir` on a step each rank did on its own (its node team, its
// process of a setting): each gives its problem (empty: none) under `name`; the answer is
// "rank R's <whose>: <problem>" for the first rank that gave one, else empty. A path that runs
// on every rank or on none decides with it. Blocking, bounded by `deadline`; collective over
// every rank of `dir`.
core::Result<std::string> FirstRankProblem(PeerDirectory& dir, const std::string& name,
                                           const std::string& mine, const std::string& whose,
                                           Deadline deadline);

}  // namespace ccltune::core
