// TEST HELPER ONLY: a PeerDirectory over files in a shared directory, so forked test ranks
// can exchange the ncclUniqueId without Redis. Values are written to a temp name and
// renamed (atomic), readers poll every millisecond until the deadline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "worker/rendezvous/peer_directory.h"

namespace ccltune::testing {

class FilePeerDirectory final : public worker::PeerDirectory {
 public:
  FilePeerDirectory(std::string dir, int rank, int world)
      : dir_(std::move(dir)), rank_(rank), world_(world) {}

  core::Result<std::vector<std::string>> AllGather(const std::string& name, const std::string& mine,
                                                   worker::Deadline deadline) override;
  core::Result<std::string> Broadcast(const std::string& name, int root,
                                      const std::optional<std::string>& value,
                                      worker::Deadline deadline) override;
  core::Result<std::vector<std::string>> AllGatherAmong(const std::string& name,
                                                        const std::string& mine,
                                                        const std::vector<int>& members,
                                                        worker::Deadline deadline) override;

 private:
  core::Status Put(const std::string& key, const std::string& value);
  core::Result<std::string> Await(const std::string& key, worker::Deadline deadline);

  std::string dir_;
  int rank_;
  int world_;
};

}  // namespace ccltune::testing
