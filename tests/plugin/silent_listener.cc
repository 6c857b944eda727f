// SilentListener (silent_listener.h).
#include "tests/plugin/silent_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ccltune::testing {

SilentListener::SilentListener() {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd_, 16) != 0 || getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return;
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { AcceptLoop(); });
}

// Polls with a short period so the destructor's stop flag is seen within 50 ms.
void SilentListener::AcceptLoop() {
  while (!stop_.load()) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const int c = accept(fd_, nullptr, nullptr);
    if (c >= 0) {
      clients_.push_back(c);
      accepted_.fetch_add(1);
    }
  }
}

SilentListener::~SilentListener() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  for (int c : clients_) close(c);
  if (fd_ >= 0) close(fd_);
}

}  // namespace ccltune::testing
