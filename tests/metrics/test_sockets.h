// Raw loopback sockets for tests that play a misbehaving peer: a client that connects and
// says nothing, a server that listens but never accepts. Not thread-safe.
#pragma once

#include "core/base/status.h"
#include "core/base/unique_fd.h"

namespace ccltune::testing {

using core::UniqueFd;

// A connection to 127.0.0.1:port that sends nothing until it is closed.
core::Result<UniqueFd> ConnectSilently(int port);

// A socket listening on a free loopback port whose connections are never accepted.
struct SilentListener {
  UniqueFd fd;
  int port = 0;
};
core::Result<SilentListener> ListenWithoutAccepting();

}  // namespace ccltune::testing
