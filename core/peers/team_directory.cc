// A team's exchanges over the job's directory (team_directory.h).
#include "core/peers/team_directory.h"

namespace ccltune::core {

Result<std::vector<std::string>> TeamDirectory::AllGather(const std::string& name,
                                                          const std::string& mine,
                                                          Deadline deadline) {
  return parent_.AllGatherAmong(ns_ + name, mine, members_, deadline);
}

// Over AllGather: the parent's Broadcast has one root for the whole job, a team's root is
// one per team.
Result<std::string> TeamDirectory::Broadcast(const std::string& name, int root,
                                             const std::optional<std::string>& value,
                                             Deadline deadline) {
  if (root < 0 || root >= static_cast<int>(members_.size())) {
    return InvalidArgument("team directory " + ns_ + ": root " + std::to_string(root) +
                           " is not a team rank (0.." + std::to_string(members_.size() - 1) + ")");
  }
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> team,
                           AllGather(name, value.value_or(std::string()), deadline));
  return team[root];
}

}  // namespace ccltune::core
