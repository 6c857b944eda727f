// What a rank tells the others when it joins (docs/design.md §3): where it runs and on what.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace ccltune::worker {

struct RankRecord {
  int rank = 0;
  std::string host;  // gethostname(): inside a pod, the pod's name
  std::string node;  // the rank's node (rank_node.h): what ranks group by
  int pid = 0;
  std::string gpu_uuid;  // "" on the host backend
  std::string pci_bus;
  std::vector<int> nvlink_peers;
  std::string nccl_version;
  std::string cuda_version;
  std::string driver_version;

  nlohmann::json ToJson() const;
  static core::Result<RankRecord> FromJson(const std::string& text);
};

// This process's record with host name, node and pid filled in.
RankRecord LocalRankRecord(int rank, const std::string& node);

}  // namespace ccltune::worker
