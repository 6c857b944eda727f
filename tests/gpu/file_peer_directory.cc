// File-based PeerDirectory for forked GPU tests (file_peer_directory.h).
#include "tests/gpu/file_peer_directory.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace ccltune::testing {

core::Status FilePeerDirectory::Put(const std::string& key, const std::string& value) {
  const std::string path = dir_ + "/" + key;
  const std::string tmp = path + ".tmp" + std::to_string(rank_);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << value;
    if (!f) return core::Unavailable("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return core::Unavailable("cannot rename " + tmp);
  return core::Status::Ok();
}

core::Result<std::string> FilePeerDirectory::Await(const std::string& key,
                                                   worker::Deadline deadline) {
  const std::string path = dir_ + "/" + key;
  for (;;) {
    std::ifstream f(path, std::ios::binary);
    if (f) {
      std::stringstream ss;
      ss << f.rdbuf();
      return ss.str();
    }
    if (worker::Expired(deadline)) return core::TimeoutError("peer directory: no " + key);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

core::Result<std::vector<std::string>> FilePeerDirectory::AllGather(const std::string& name,
                                                                    const std::string& mine,
                                                                    worker::Deadline deadline) {
  std::vector<int> everyone(world_);
  for (int r = 0; r < world_; ++r) everyone[r] = r;
  return AllGatherAmong(name, mine, everyone, deadline);
}

core::Result<std::vector<std::string>> FilePeerDirectory::AllGatherAmong(
    const std::string& name, const std::string& mine, const std::vector<int>& members,
    worker::Deadline deadline) {
  CCLTUNE_RETURN_IF_ERROR(Put(name + ".r" + std::to_string(rank_), mine));
  std::vector<std::string> out;
  for (int r : members) {
    CCLTUNE_ASSIGN_OR_RETURN(std::string v, Await(name + ".r" + std::to_string(r), deadline));
    out.push_back(std::move(v));
  }
  return out;
}

core::Result<std::string> FilePeerDirectory::Broadcast(const std::string& name, int root,
                                                       const std::optional<std::string>& value,
                                                       worker::Deadline deadline) {
  if (rank_ == root) {
    if (!value) return core::InvalidArgument("broadcast root needs a value");
    CCLTUNE_RETURN_IF_ERROR(Put(name + ".root", *value));
    return *value;
  }
  return Await(name + ".root", deadline);
}

}  // namespace ccltune::testing
