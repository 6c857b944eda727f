// The job-wide default of a member gather, and one verdict over every rank (peer_directory.h).
#include "core/peers/peer_directory.h"

namespace ccltune::core {

Result<std::vector<std::string>> ValuesOfMembers(const std::vector<std::string>& all,
                                                 const std::vector<int>& members,
                                                 const std::string& name) {
  std::vector<std::string> out;
  for (int r : members) {
    if (r < 0 || r >= static_cast<int>(all.size())) {
      return InvalidArgument("exchange " + name + ": member rank " + std::to_string(r) +
                             " outside the job's " + std::to_string(all.size()) + " ranks");
    }
    out.push_back(all[r]);
  }
  return out;
}

Result<std::string> FirstRankProblem(PeerDirectory& dir, const std::string& name,
                                     const std::string& mine, const std::string& whose,
                                     Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> verdicts, dir.AllGather(name, mine, deadline));
  for (std::size_t r = 0; r < verdicts.size(); ++r) {
    if (!verdicts[r].empty())
      return "rank " + std::to_string(r) + "'s " + whose + ": " + verdicts[r];
  }
  return std::string();
}

Result<std::vector<std::string>> PeerDirectory::AllGatherAmong(const std::string& name,
                                                               const std::string& mine,
                                                               const std::vector<int>& members,
                                                               Deadline deadline) {
  CCLTUNE_ASSIGN_OR_RETURN(std::vector<std::string> all, AllGather(name, mine, deadline));
  return ValuesOfMembers(all, members, name);
}

}  // namespace ccltune::core
