// NCCL INFO log parsing (nccl_init_log.h). The patterns follow NCCL 2.28.9's format strings.
#include "core/node/nccl_init_log.h"

#include <regex>

namespace ccltune::core {
namespace {

// src/init.cc: "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d".
const std::regex& NodesPattern() {
  static const std::regex re(R"(NCCL INFO comm \S+ rank \d+ nRanks \d+ nNodes (\d+) )");
  return re;
}

// src/transport/{p2p,shm,net}.cc: "Channel %02d[/%d] : %d[%d] -> %d[%d] [[send]|[receive]]
// via %s". Ring lines of src/graph/rings.cc ("Channel 00/24 :    0   1") have no "via".
const std::regex& LinkPattern() {
  static const std::regex re(
      R"(NCCL INFO Channel \d+(?:/\d+)? : (\d+)\[(\d+)\] -> (\d+)\[(\d+)\](?: \[(?:send|receive)\])? via (\S+))");
  return re;
}

// src/init.cc: "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx ... - Init
// COMPLETE" (ncclCommInitRankConfig, ncclCommSplit, ...).
const std::regex& DevicePattern() {
  static const std::regex re(
      R"(NCCL INFO \S+ comm \S+ rank (\d+) nranks (\d+) cudaDev \d+ nvmlDev (\d+) .*Init COMPLETE)");
  return re;
}

// Whether rank `r` of the job's communicator has device `dev`, as far as the log says.
bool AgreesWith(const std::map<int, int>* job, int r, int dev) {
  if (job == nullptr || dev < 0) return true;
  const auto it = job->find(r);
  return it == job->end() || it->second == dev;
}

// src/transport/net_socket.cc:337: "NET/Socket: Using %d threads and %d sockets per thread".
const std::regex& SocketThreadsPattern() {
  static const std::regex re(
      R"(NCCL INFO NET/Socket: Using (\d+) threads and (\d+) sockets per thread)");
  return re;
}

std::string Join(const std::set<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

void NcclInitLog::Merge(const NcclInitLog& other) {
  n_nodes.insert(other.n_nodes.begin(), other.n_nodes.end());
  links.insert(other.links.begin(), other.links.end());
  net_socket.insert(other.net_socket.begin(), other.net_socket.end());
  for (const auto& [size, ranks] : other.devices) devices[size].insert(ranks.begin(), ranks.end());
}

nlohmann::json NcclInitLog::ToJson() const {
  nlohmann::json l = nlohmann::json::array();
  for (const NcclLink& k : links) l.push_back({k.from, k.to, k.via, k.from_dev, k.to_dev});
  nlohmann::json j = {{"nNodes", n_nodes}, {"links", l}};
  if (!net_socket.empty()) j["netSocket"] = net_socket;
  if (!devices.empty()) {
    nlohmann::json d = nlohmann::json::object();
    for (const auto& [size, ranks] : devices) {
      for (const auto& [r, dev] : ranks) d[std::to_string(size)][std::to_string(r)] = dev;
    }
    j["devices"] = d;
  }
  return j;
}

NcclInitLog NcclInitLog::FromJson(const nlohmann::json& j) {
  NcclInitLog log;
  for (const auto& n : j.value("nNodes", nlohmann::json::array())) log.n_nodes.insert(n.get<int>());
  for (const auto& l : j.value("links", nlohmann::json::array())) {
    const int from_dev = l.size() > 3 ? l.at(3).get<int>() : -1;
    const int to_dev = l.size() > 4 ? l.at(4).get<int>() : -1;
    log.links.insert(
        {l.at(0).get<int>(), l.at(1).get<int>(), l.at(2).get<std::string>(), from_dev, to_dev});
  }
  for (const auto& s : j.value("netSocket", nlohmann::json::array()))
    log.net_socket.insert(s.get<std::string>());
  const nlohmann::json devices = j.value("devices", nlohmann::json::object());  // outlives items()
  for (const auto& [size, ranks] : devices.items()) {
    for (const auto& [r, dev] : ranks.items()) {
      log.devices[std::stoi(size)][std::stoi(r)] = dev.get<int>();
    }
  }
  return log;
}

void ParseNcclInitLine(const std::string& line, NcclInitLog* out) {
  if (line.find("NCCL INFO") == std::string::npos) return;  // cheap filter before the regexes
  std::smatch m;
  if (std::regex_search(line, m, NodesPattern())) {
    out->n_nodes.insert(std::stoi(m[1].str()));
  } else if (std::regex_search(line, m, LinkPattern())) {
    out->links.insert({std::stoi(m[1].str()), std::stoi(m[3].str()), m[5].str(),
                       std::stoi(m[2].str()), std::stoi(m[4].str())});
  } else if (std::regex_search(line, m, DevicePattern())) {
    out->devices[std::stoi(m[2].str())][std::stoi(m[1].str())] = std::stoi(m[3].str());
  } else if (std::regex_search(line, m, SocketThreadsPattern())) {
    out->net_socket.insert(m[1].str() + " threads x " + m[2].str() + " sockets");
  }
}

NcclInitLog ParseNcclInitLog(std::istream& in) {
  NcclInitLog log;
  std::string line;
  while (std::getline(in, line)) ParseNcclInitLine(line, &log);
  return log;
}

std::string TransportKind(const std::string& via) {
  const auto first = via.find('/');
  const std::string head = via.substr(0, first);
  if (head != "NET" || first == std::string::npos) return head;
  const auto second = via.find('/', first + 1);
  return via.substr(0, second);  // "NET/Socket", "NET/IB"
}

NcclTopology ClassifyLinks(const NcclInitLog& log, const std::vector<std::string>& node_of_rank) {
  NcclTopology t;
  t.n_nodes = log.n_nodes;
  t.net_socket = log.net_socket;
  const int world = static_cast<int>(node_of_rank.size());
  const auto job_it = log.devices.find(world);
  const std::map<int, int>* job = job_it == log.devices.end() ? nullptr : &job_it->second;
  for (const NcclLink& l : log.links) {
    if (l.from < 0 || l.to < 0 || l.from >= world || l.to >= world) continue;
    if (!AgreesWith(job, l.from, l.from_dev) || !AgreesWith(job, l.to, l.to_dev)) continue;
    auto& bucket = node_of_rank[l.from] == node_of_rank[l.to] ? t.intra_node : t.inter_node;
    bucket.insert(TransportKind(l.via));
  }
  return t;
}

nlohmann::json NcclTopology::ToJson() const {
  nlohmann::json j = {{"nNodes", n_nodes}, {"intraNode", intra_node}, {"interNode", inter_node}};
  if (!net_socket.empty()) j["netSocket"] = net_socket;
  return j;
}

std::string DescribeNcclTopology(const nlohmann::json& topology) {
  std::set<std::string> nodes;
  for (const auto& n : topology.value("nNodes", nlohmann::json::array()))
    nodes.insert(std::to_string(n.get<int>()));
  std::set<std::string> intra, inter;
  for (const auto& s : topology.value("intraNode", nlohmann::json::array()))
    intra.insert(s.get<std::string>());
  for (const auto& s : topology.value("interNode", nlohmann::json::array()))
    inter.insert(s.get<std::string>());
  std::string out = "NCCL formed " +
                    (nodes.empty() ? std::string("? (no nNodes line)") : Join(nodes, " or ")) +
                    " node(s)";
  if (!intra.empty()) out += "; " + Join(intra, "+") + " inside nodes";
  if (!inter.empty()) out += "; " + Join(inter, "+") + " between them";
  if (intra.empty() && inter.empty()) out += "; no channel connection logged";
  std::set<std::string> sockets;
  for (const auto& s : topology.value("netSocket", nlohmann::json::array()))
    sockets.insert(s.get<std::string>());
  if (!sockets.empty()) out += "; NET/Socket " + Join(sockets, " or ");
  return out;
}

}  // namespace ccltune::core
