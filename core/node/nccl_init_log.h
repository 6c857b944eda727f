// What NCCL itself says about the communicators it formed, read from its INFO log
// (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET, NCCL_DEBUG_FILE): the node count of each
// communicator ("comm 0x… rank 0 nRanks 4 nNodes 2 localRanks 2 …", src/init.cc) and the
// transport of every channel connection ("Channel 00/0 : 1[1] -> 2[2] [send] via
// NET/Socket/0", src/transport/{p2p,shm,net}.cc), and the socket transport's threads
// ("NET/Socket: Using 4 threads and 4 sockets per thread", src/transport/net_socket.cc:337,
// logged only when it uses helper threads). NCCL 2.28 has no API for these (nccl.h
// exports no communicator properties), so the summary's "nodes NCCL formed, joined by …" is
// this log, never an assumption. Pure text: tested on captured lines without a GPU.
#pragma once

#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ccltune::core {

struct NcclLink {
  int from = 0;
  int to = 0;
  std::string via;    // as NCCL prints it: "P2P/CUMEM/read", "NET/Socket/0", "SHM/direct/direct"
  int from_dev = -1;  // the ranks' NVML device indices, as the line prints them (-1: unknown)
  int to_dev = -1;
  auto operator<=>(const NcclLink&) const = default;
};

struct NcclInitLog {
  std::set<int> n_nodes;             // every nNodes value a communicator reported
  std::set<NcclLink> links;          // distinct (from, to, via, devices)
  std::set<std::string> net_socket;  // "4 threads x 4 sockets" per distinct socket setting
  // Per communicator size, each rank's NVML device, from the "... - Init COMPLETE" lines. A
  // connection line names no communicator: a process that also holds a communicator of other
  // ranks (the hierarchical all-reduce's split by local rank, its ranks renumbered) logs links
  // whose ranks are not the job's. ClassifyLinks keeps those whose devices agree with the
  // job's ranks.
  std::map<int, std::map<int, int>> devices;

  void Merge(const NcclInitLog& other);
  nlohmann::json ToJson() const;  // {nNodes:[…], links:[[from, to, via], …], netSocket?:[…]}
  static NcclInitLog FromJson(const nlohmann::json& j);
};

// Adds what one log line says (other lines are ignored).
void ParseNcclInitLine(const std::string& line, NcclInitLog* out);
NcclInitLog ParseNcclInitLog(std::istream& in);

// The transport family of a `via`: "P2P", "SHM", "NET/Socket", "NET/IB", "CollNet"… (the
// first path part, and the network plugin's name for NET).
std::string TransportKind(const std::string& via);

// Which transports join ranks inside a node and between nodes, by `node_of_rank` (index =
// rank; links naming ranks outside it are left out, and so are links whose devices are not
// those the communicator of node_of_rank.size() ranks logged for its ranks).
struct NcclTopology {
  std::set<int> n_nodes;
  std::set<std::string> intra_node;
  std::set<std::string> inter_node;
  std::set<std::string> net_socket;  // NcclInitLog::net_socket
  nlohmann::json ToJson() const;  // {nNodes:[…], intraNode:[…], interNode:[…], netSocket?:[…]}
};
NcclTopology ClassifyLinks(const NcclInitLog& log, const std::vector<std::string>& node_of_rank);

// "NCCL formed 2 nodes; P2P inside nodes, NET/Socket between them" from ClassifyLinks' JSON
// (and "; NET/Socket 4 threads x 4 sockets" where NCCL logged its socket threads).
std::string DescribeNcclTopology(const nlohmann::json& topology);

}  // namespace ccltune::core
