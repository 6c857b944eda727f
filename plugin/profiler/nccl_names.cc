#include "plugin/profiler/nccl_names.h"

#include <array>
#include <utility>

namespace ccltune::plugin::profiler {
namespace {

// ncclFuncToString of NCCL 2.27-2.29 (src/collectives.cc), collectives only: Send, Recv
// and SendRecv come as P2p events, which the plugin does not ask for.
constexpr std::array<std::pair<std::string_view, OpName>, 8> kOps{{
    {"AllReduce", {"allReduce", false, 1}},
    {"AllGather", {"allGather", true, 2}},
    {"ReduceScatter", {"reduceScatter", true, 3}},
    {"AlltoAll", {"allToAll", true, 4}},
    {"Broadcast", {"broadcast", false, 5}},
    {"Reduce", {"reduce", false, 6}},
    {"Gather", {"gather", true, 7}},
    {"Scatter", {"scatter", true, 8}},
}};

// ncclDatatypeToString of NCCL 2.27-2.29.
constexpr std::array<std::pair<std::string_view, DtypeName>, 11> kDtypes{{
    {"ncclFloat32", {"fp32", 4, 1}},
    {"ncclBfloat16", {"bf16", 2, 2}},
    {"ncclFloat16", {"fp16", 2, 3}},
    {"ncclInt32", {"int32", 4, 4}},
    {"ncclInt8", {"int8", 1, 5}},
    {"ncclUint32", {"uint32", 4, 6}},
    {"ncclInt64", {"int64", 8, 7}},
    {"ncclUint64", {"uint64", 8, 8}},
    {"ncclFloat64", {"fp64", 8, 9}},
    {"ncclFloat8e4m3", {"fp8e4m3", 1, 10}},
    {"ncclFloat8e5m2", {"fp8e5m2", 1, 11}},
}};

// ncclAlgoToString and ncclProtoToString of NCCL 2.27-2.29, in the rows and columns of
// kChoices below.
constexpr std::array<std::string_view, 7> kAlgos{
    "RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
constexpr std::array<std::string_view, 3> kProtos{"LL", "LL128", "SIMPLE"};

// Literals, not strings built per call: the telemetry library may keep the pointer.
constexpr const char* kChoices[7][3] = {
    {"nccl:algo=ring,proto=ll", "nccl:algo=ring,proto=ll128", "nccl:algo=ring,proto=simple"},
    {"nccl:algo=tree,proto=ll", "nccl:algo=tree,proto=ll128", "nccl:algo=tree,proto=simple"},
    {"nccl:algo=collnetdirect,proto=ll", "nccl:algo=collnetdirect,proto=ll128",
     "nccl:algo=collnetdirect,proto=simple"},
    {"nccl:algo=collnetchain,proto=ll", "nccl:algo=collnetchain,proto=ll128",
     "nccl:algo=collnetchain,proto=simple"},
    {"nccl:algo=nvls,proto=ll", "nccl:algo=nvls,proto=ll128", "nccl:algo=nvls,proto=simple"},
    {"nccl:algo=nvlstree,proto=ll", "nccl:algo=nvlstree,proto=ll128",
     "nccl:algo=nvlstree,proto=simple"},
    {"nccl:algo=pat,proto=ll", "nccl:algo=pat,proto=ll128", "nccl:algo=pat,proto=simple"},
};

template <typename Table>
int IndexOf(const Table& table, std::string_view name) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i] == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

OpName LookupOp(std::string_view nccl_func) {
  for (const auto& [nccl, ours] : kOps)
    if (nccl == nccl_func) return ours;
  return {"unknown", false, 0};
}

DtypeName LookupDtype(std::string_view nccl_datatype) {
  for (const auto& [nccl, ours] : kDtypes)
    if (nccl == nccl_datatype) return ours;
  return {"unknown", 1, 0};
}

DtypeName DtypeById(std::uint8_t id) {
  return id >= 1 && id <= kDtypes.size() ? kDtypes[id - 1].second : DtypeName{"unknown", 1, 0};
}

std::uint8_t ChoiceId(std::string_view nccl_algo, std::string_view nccl_proto) {
  const int a = IndexOf(kAlgos, nccl_algo);
  const int p = IndexOf(kProtos, nccl_proto);
  return a < 0 || p < 0 ? 0 : static_cast<std::uint8_t>(1 + a * kProtos.size() + p);
}

const char* ChoiceById(std::uint8_t id) {
  if (id == 0 || id > kAlgos.size() * kProtos.size()) return "nccl";
  return kChoices[(id - 1) / kProtos.size()][(id - 1) % kProtos.size()];
}

const char* ChoiceName(std::string_view nccl_algo, std::string_view nccl_proto) {
  return ChoiceById(ChoiceId(nccl_algo, nccl_proto));
}

std::uint64_t CallBytes(const OpName& op, const DtypeName& dtype, std::uint64_t count, int nranks) {
  const std::uint64_t ranks = op.per_rank_count && nranks > 0 ? nranks : 1;
  return count * ranks * dtype.size;
}

}  // namespace ccltune::plugin::profiler
