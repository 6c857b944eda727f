// What a published winner means to NCCL's tuner: which cost-table entry to force and how
// many channels, or "leave NCCL's own choice" with the reason. Shared by the plugin and by
// `ccltune export --format nccl-tuner-csv`, so both read a winner the same way.
#pragma once

#include <string>

#include "core/base/status.h"

namespace ccltune::apply {

struct ForcedChoice {
  int algo = -1;     // abi::kAlgoTree / kAlgoRing, -1 = NCCL picks algorithm and protocol
  int proto = -1;    // abi::kProtoLL / LL128 / Simple, -1 together with algo
  int channels = 0;  // > 0: set *nChannels (from ctas=N)
  bool forces_anything() const { return algo >= 0 || channels > 0; }
};

// Only NCCL-internal winners steer NCCL: "nccl" (forces nothing: NCCL's default won) and
// "nccl:algo=ring|tree,proto=ll|ll128|simple[,ctas=N]" / "nccl:ctas=N". Everything else
// is an error whose message says why NCCL is left alone: another implementation won
// (oneshot, nccl-symm, nccl-reg, rs+ag, host choices), a parameter the tuner cannot set
// (p2pchunk), or a name that does not parse (unknown base/param/value).
core::Result<ForcedChoice> ForcedChoiceFromWinner(const std::string& winner);

const char* AlgoName(int algo);    // "tree", "ring", "?"
const char* ProtoName(int proto);  // "ll", "ll128", "simple", "?"

}  // namespace ccltune::apply
