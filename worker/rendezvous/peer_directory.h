// The worker's name for core/peers/peer_directory.h; Rendezvous implements it over Redis.
#pragma once

#include "core/peers/peer_directory.h"
#include "worker/deadline.h"

namespace ccltune::worker {

using core::PeerDirectory;

}  // namespace ccltune::worker
