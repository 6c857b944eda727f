// Thin, checked wrappers over the BSD socket calls the TCP mesh needs. Every socket they
// return is non-blocking with TCP_NODELAY (small collectives are latency-bound).
#pragma once

#include <string>

#include "core/base/status.h"
#include "core/base/unique_fd.h"

namespace ccltune::worker::host {

using core::UniqueFd;

// "strerror(errno)" of the current errno, thread-safe.
std::string ErrnoText(int err);

// Binds host:0 (an ephemeral port) and listens; `host` is an IP literal or a name.
core::Result<UniqueFd> ListenTcp(const std::string& host, int backlog);
core::Result<int> LocalPort(int fd);

// Starts a non-blocking connect; completion is seen as POLLOUT, then SocketError().
core::Result<UniqueFd> StartConnect(const std::string& host, int port);
// Accepts one pending connection (non-blocking); an invalid fd means none was pending.
core::Result<UniqueFd> AcceptOne(int listen_fd);

// The pending error of a socket (SO_ERROR), 0 when none.
int SocketError(int fd);
core::Status ConfigureStream(int fd);  // O_NONBLOCK + TCP_NODELAY

}  // namespace ccltune::worker::host
