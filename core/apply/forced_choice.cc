// Winner name → cost-table entry (forced_choice.h).
#include "core/apply/forced_choice.h"

#include "core/apply/tuner_abi.h"
#include "core/plan/choice.h"

namespace ccltune::apply {
namespace {

int AlgoIndex(const std::string& v) {
  if (v == "tree") return abi::kAlgoTree;
  if (v == "ring") return abi::kAlgoRing;
  return -1;
}

int ProtoIndex(const std::string& v) {
  if (v == "ll") return abi::kProtoLL;
  if (v == "ll128") return abi::kProtoLL128;
  if (v == "simple") return abi::kProtoSimple;
  return -1;
}

}  // namespace

core::Result<ForcedChoice> ForcedChoiceFromWinner(const std::string& winner) {
  // ParseChoice is the catalog's strict parser: values are already checked against the
  // allowed sets there, so the lookups below cannot miss for a name that parsed.
  auto parsed = core::ParseChoice(winner, "nccl");
  if (!parsed.ok()) return parsed.status().WithContext("winner '" + winner + "'");
  if (parsed->base != "nccl") {
    return core::FailedPrecondition("winner '" + winner +
                                    "' is not NCCL-internal; NCCL's tuner cannot select it");
  }
  ForcedChoice out;
  for (const auto& [key, value] : parsed->params) {
    if (key == "algo") {
      out.algo = AlgoIndex(value);
    } else if (key == "proto") {
      out.proto = ProtoIndex(value);
    } else if (key == "ctas") {
      out.channels = std::stoi(value);  // validated 1..64 by ParseChoice
    } else {
      return core::FailedPrecondition("winner '" + winner + "' sets " + key +
                                      ", which a tuner plugin cannot set");
    }
  }
  // NCCL's tuner ABI: "not only the algorithm or only the protocol".
  if ((out.algo >= 0) != (out.proto >= 0)) {
    return core::InvalidArgument("winner '" + winner + "': algo and proto go together");
  }
  return out;
}

const char* AlgoName(int algo) {
  return algo == abi::kAlgoTree ? "tree" : algo == abi::kAlgoRing ? "ring" : "?";
}

const char* ProtoName(int proto) {
  switch (proto) {
    case abi::kProtoLL:
      return "ll";
    case abi::kProtoLL128:
      return "ll128";
    case abi::kProtoSimple:
      return "simple";
    default:
      return "?";
  }
}

}  // namespace ccltune::apply
