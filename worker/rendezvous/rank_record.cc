#include "worker/rendezvous/rank_record.h"

#include <unistd.h>

#include <array>

namespace ccltune::worker {

nlohmann::json RankRecord::ToJson() const {
  return {{"rank", rank},
          {"host", host},
          {"node", node},
          {"pid", pid},
          {"gpuUUID", gpu_uuid},
          {"pciBus", pci_bus},
          {"nvlinkPeers", nvlink_peers},
          {"ncclVersion", nccl_version},
          {"cudaVersion", cuda_version},
          {"driverVersion", driver_version}};
}

core::Result<RankRecord> RankRecord::FromJson(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    RankRecord r;
    r.rank = j.at("rank").get<int>();
    r.host = j.at("host").get<std::string>();
    r.node = j.value("node", r.host);  // records of older workers: the host was the node
    r.pid = j.at("pid").get<int>();
    r.gpu_uuid = j.value("gpuUUID", "");
    r.pci_bus = j.value("pciBus", "");
    r.nvlink_peers = j.value("nvlinkPeers", std::vector<int>{});
    r.nccl_version = j.value("ncclVersion", "");
    r.cuda_version = j.value("cudaVersion", "");
    r.driver_version = j.value("driverVersion", "");
    return r;
  } catch (const std::exception& e) {
    return core::DataLoss(std::string("rank record does not parse: ") + e.what());
  }
}

RankRecord LocalRankRecord(int rank, const std::string& node) {
  RankRecord r;
  r.rank = rank;
  r.node = node;
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) == 0) r.host = name.data();
  r.pid = static_cast<int>(getpid());
  return r;
}

}  // namespace ccltune::worker
