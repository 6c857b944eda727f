#include "worker/metrics/socket_io.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>

namespace ccltune::worker::net {
namespace {

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

int PollMillis(Deadline deadline) {
  double left = SecondsLeft(deadline);
  if (left <= 0) return 0;
  return static_cast<int>(std::ceil(std::min(left, 3600.0) * 1000));
}

core::Status SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return core::Internal(Errno("fcntl(O_NONBLOCK)"));
  return core::Status::Ok();
}

// One connect attempt to one resolved address.
core::Result<UniqueFd> ConnectOne(const addrinfo& ai, Deadline deadline) {
  UniqueFd fd(socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC, ai.ai_protocol));
  if (!fd.valid()) return core::Unavailable(Errno("socket"));
  CCLTUNE_RETURN_IF_ERROR(SetNonBlocking(fd.get()));
  if (connect(fd.get(), ai.ai_addr, ai.ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) return core::Unavailable(Errno("connect"));
  CCLTUNE_RETURN_IF_ERROR(WaitFd(fd.get(), POLLOUT, deadline).WithContext("connect"));
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0)
    return core::Unavailable(std::string("connect: ") + std::strerror(err ? err : errno));
  return fd;
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

core::Status WaitFd(int fd, short events, Deadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, PollMillis(deadline));
    if (n > 0) return core::Status::Ok();  // ready, or an error the next call will report
    if (n < 0 && errno != EINTR) return core::Internal(Errno("poll"));
    if (n == 0 && Expired(deadline)) return core::TimeoutError("socket I/O deadline passed");
  }
}

core::Status WriteAll(int fd, std::string_view data, Deadline deadline) {
  while (!data.empty()) {
    CCLTUNE_RETURN_IF_ERROR(WaitFd(fd, POLLOUT, deadline));
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) return core::Unavailable(Errno("send"));
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return core::Status::Ok();
}

core::Result<std::string> ReadUntil(int fd, std::string_view terminator, std::size_t max_bytes,
                                    Deadline deadline) {
  std::string data;
  char buf[4096];
  while (terminator.empty() || data.find(terminator) == std::string::npos) {
    if (data.size() >= max_bytes)
      return core::FailedPrecondition("more than " + std::to_string(max_bytes) + " bytes");
    CCLTUNE_RETURN_IF_ERROR(WaitFd(fd, POLLIN, deadline));
    std::size_t want = std::min(sizeof(buf), max_bytes - data.size());
    ssize_t n = recv(fd, buf, want, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) return core::Unavailable(Errno("recv"));
    if (n == 0) break;  // EOF
    data.append(buf, static_cast<std::size_t>(n));
  }
  return data;
}

core::Result<UniqueFd> ConnectTcp(const std::string& host, int port, Deadline deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list);
  if (rc != 0) return core::Unavailable("resolve " + host + ": " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(list, freeaddrinfo);
  core::Status last = core::Unavailable("no address for " + host);
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    auto fd = ConnectOne(*ai, deadline);
    if (fd.ok()) return std::move(fd).value();
    last = fd.status();
    if (last.code() == core::StatusCode::kTimeout) break;
  }
  return last.WithContext(host + ":" + std::to_string(port));
}

}  // namespace ccltune::worker::net
