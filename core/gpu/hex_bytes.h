// Opaque handles (ncclUniqueId, cudaIpcMemHandle_t) as hex text, so they travel through
// the PeerDirectory's string exchange.
#pragma once

#include <cstddef>
#include <string>

#include "core/base/status.h"

namespace ccltune::gpu {

std::string HexBytes(const void* data, std::size_t n);
// Exactly 2n hex digits into `out`; `what` names the handle in the error.
core::Status UnhexBytes(const std::string& hex, void* out, std::size_t n, const std::string& what);

}  // namespace ccltune::gpu
