// The worker's name for core/peer_directory.h; Rendezvous implements it over Redis.
#pragma once

#include "core/peer_directory.h"
#include "worker/deadline.h"

namespace ccltune::worker {

using core::PeerDirectory;

}  // namespace ccltune::worker
