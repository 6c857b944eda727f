// What the strings of NCCL's Coll event descriptor mean to ccltune: NCCL's function name
// ("AllReduce") → our op name (docs/design.md §5, "allReduce"), NCCL's datatype name
// ("ncclBfloat16") → ours ("bf16") and its size, NCCL's algorithm and protocol names
// ("RING", "LL128") → the choice name that ran ("nccl:algo=ring,proto=ll128"), and the call's
// bytes as the tune keys a problem (docs/design.md §4). Every name returned is a string
// literal: the telemetry library may keep the pointer after the call returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ccltune::plugin::profiler {

struct OpName {
  const char* name;  // "allReduce"; "unknown" for a function we do not know
  // The tune keys allGather, reduceScatter, allToAll, gather and scatter by the whole
  // buffer (nccl-tests' size): NCCL's count is per rank, so bytes = count x nranks x size.
  bool per_rank_count;
  std::uint8_t id;  // 1..kOpIds-1 in NCCL's order; 0 for "unknown" (a small table's index)
};
inline constexpr std::size_t kOpIds = 9;
OpName LookupOp(std::string_view nccl_func);

struct DtypeName {
  const char* name;  // "bf16"; "unknown" (NCCL 2.27-2.29 also name ncclUint8 "Unknown")
  std::size_t size;  // bytes per element; 1 for "unknown"
  std::uint8_t id;   // 1..11; 0 for "unknown"
};
DtypeName LookupDtype(std::string_view nccl_datatype);
// The DtypeName of `id` ("unknown" for 0 or an id not given out).
DtypeName DtypeById(std::uint8_t id);

// "nccl:algo=A,proto=P" with NCCL's names lowercased (NCCL_ALGO's spellings: ring, tree,
// collnetdirect, collnetchain, nvls, nvlstree, pat; protocols ll, ll128, simple); "nccl"
// when either is not one NCCL 2.27-2.29 names.
const char* ChoiceName(std::string_view nccl_algo, std::string_view nccl_proto);
// The same as a small number, to keep in a word (choice_table.h): 0 is "nccl", and
// ChoiceById(ChoiceId(a, p)) == ChoiceName(a, p).
std::uint8_t ChoiceId(std::string_view nccl_algo, std::string_view nccl_proto);
const char* ChoiceById(std::uint8_t id);

std::uint64_t CallBytes(const OpName& op, const DtypeName& dtype, std::uint64_t count, int nranks);

}  // namespace ccltune::plugin::profiler
