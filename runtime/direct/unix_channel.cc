// Abstract Unix datagram sockets (unix_channel.h).
#include "runtime/direct/unix_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ccltune::runtime::direct {
namespace {

// The abstract address of `name`: a leading NUL, then the name, no terminator.
socklen_t AddressOf(const std::string& name, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path + 1, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

core::Result<UnixChannel> UnixChannel::Bind(const std::string& name) {
  if (name.empty() || name.size() > 100) {
    return core::InvalidArgument("socket name: 1 to 100 bytes, got " + std::to_string(name.size()));
  }
  core::UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) return core::Unavailable(Errno("socket"));
  sockaddr_un addr;
  const socklen_t len = AddressOf(name, &addr);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    return core::Unavailable(Errno("bind '" + name + "'"));
  }
  return UnixChannel(std::move(fd));
}

core::Status UnixChannel::Send(const std::string& peer, std::string_view bytes,
                               const std::vector<int>& fds) const {
  if (bytes.size() > kMaxBytes || fds.size() > static_cast<std::size_t>(kMaxFds)) {
    return core::InvalidArgument("datagram: at most " + std::to_string(kMaxBytes) + " bytes and " +
                                 std::to_string(kMaxFds) + " descriptors");
  }
  sockaddr_un addr;
  msghdr msg{};
  msg.msg_name = &addr;
  msg.msg_namelen = AddressOf(peer, &addr);
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  if (::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size())) {
    return core::Status::Ok();
  }
  return core::Unavailable(Errno("send to '" + peer + "'"));
}

core::Result<std::optional<Datagram>> UnixChannel::Receive(std::chrono::milliseconds wait) const {
  pollfd p{fd_.get(), POLLIN, 0};
  const int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
  if (ready < 0 && errno != EINTR) return core::Unavailable(Errno("poll"));
  if (ready <= 0) return std::optional<Datagram>();
  Datagram d;
  d.bytes.resize(kMaxBytes);
  iovec iov{d.bytes.data(), d.bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return std::optional<Datagram>();
    return core::Unavailable(Errno("recvmsg"));
  }
  d.bytes.resize(static_cast<std::size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      d.fds.emplace_back(fd);
    }
  }
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    return core::InvalidArgument("datagram: longer than " + std::to_string(kMaxBytes) + " bytes");
  }
  return std::optional<Datagram>(std::move(d));
}

}  // namespace ccltune::runtime::direct
