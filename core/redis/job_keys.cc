#include "core/redis/job_keys.h"

namespace ccltune::core {

JobKeys::JobKeys(std::string job_id, int attempt)
    : job_id_(std::move(job_id)),
      attempt_(attempt),
      prefix_("ccltune:v1:job:" + job_id_ + ":" + std::to_string(attempt) + ":") {}

std::string JobKeys::Rank(int rank) const { return prefix_ + "rank:" + std::to_string(rank); }
std::string JobKeys::Joined() const { return prefix_ + "joined"; }
std::string JobKeys::Exchange(const std::string& name) const { return prefix_ + "x:" + name; }
std::string JobKeys::PreSync() const { return prefix_ + "presync"; }
std::string JobKeys::Heartbeat(int rank) const { return prefix_ + "hb:" + std::to_string(rank); }
std::string JobKeys::Abort() const { return prefix_ + "abort"; }
std::string JobKeys::Progress() const { return prefix_ + "progress"; }
std::string JobKeys::Published() const { return prefix_ + "published"; }
std::string JobKeys::Summary() const { return prefix_ + "summary"; }
std::string JobKeys::Failure() const { return prefix_ + "failure"; }
std::string JobKeys::Cancelled() const { return "ccltune:v1:cancelled:" + job_id_; }
std::string JobKeys::JobPattern(const std::string& job_id) {
  return "ccltune:v1:job:" + job_id + ":*";
}

}  // namespace ccltune::core
