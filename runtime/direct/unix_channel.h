// Messages between the processes of one node over abstract Unix datagram sockets: each
// rank binds its own name and sends to the peers' names. Datagrams arrive whole and in
// order or not at all, and may carry file descriptors (SCM_RIGHTS), which is how a
// virtual-memory allocation's handle travels to another process. Abstract names need no
// file and vanish with the socket; they are shared by the processes of one network
// namespace (one pod, or the host network).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/base/unique_fd.h"

namespace ccltune::runtime::direct {

struct Datagram {
  std::string bytes;
  std::vector<core::UniqueFd> fds;
};

class UnixChannel {
 public:
  static constexpr std::size_t kMaxBytes = 4096;
  static constexpr int kMaxFds = 4;

  // Binds the abstract name `name` (at most 100 bytes).
  static core::Result<UnixChannel> Bind(const std::string& name);

  // Sends to the peer bound at `peer`. Unavailable while no one is bound there (the peer
  // has not started, or is gone) or its queue is full: the caller tries again later.
  core::Status Send(const std::string& peer, std::string_view bytes,
                    const std::vector<int>& fds = {}) const;
  // One datagram, waiting at most `wait`; nullopt when none came.
  core::Result<std::optional<Datagram>> Receive(std::chrono::milliseconds wait) const;

 private:
  explicit UnixChannel(core::UniqueFd fd) : fd_(std::move(fd)) {}
  core::UniqueFd fd_;
};

}  // namespace ccltune::runtime::direct
