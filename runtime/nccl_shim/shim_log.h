// libccltune-nccl's lines on stderr, all prefixed "ccltune-nccl:". Notes (a communicator
// served or not, a missing NCCL) print unless CCLTUNE_LOG=quiet; per-call lines only with
// CCLTUNE_NCCL_DEBUG=1, in the spirit of NCCL_DEBUG_SUBSYS=COLL. Never a secret: the Redis
// URL is not printed. Thread-safe (one write per line).
#pragma once

#include <string>

namespace ccltune::shim {

void Note(const std::string& line);
bool DebugOn();
void Debug(const std::string& line);

}  // namespace ccltune::shim
