#include "worker/host/socket_util.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace ccltune::worker::host {
namespace {

using AddrInfoPtr = std::unique_ptr<addrinfo, decltype(&freeaddrinfo)>;

core::Result<AddrInfoPtr> Resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    return core::Unavailable("cannot resolve '" + host + "': " + gai_strerror(rc));
  }
  return AddrInfoPtr(res, &freeaddrinfo);
}

core::Status SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return core::Internal("fcntl(O_NONBLOCK): " + ErrnoText(errno));
  }
  return core::Status::Ok();
}

}  // namespace

std::string ErrnoText(int err) {
  char buf[256];
  // GNU strerror_r returns the message pointer (maybe not buf).
  return strerror_r(err, buf, sizeof(buf));
}

core::Status ConfigureStream(int fd) {
  CCLTUNE_RETURN_IF_ERROR(SetNonBlocking(fd));
  const int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
    return core::Internal("setsockopt(TCP_NODELAY): " + ErrnoText(errno));
  }
  return core::Status::Ok();
}

core::Result<UniqueFd> ListenTcp(const std::string& host, int backlog) {
  CCLTUNE_ASSIGN_OR_RETURN(AddrInfoPtr ai, Resolve(host, 0, true));
  UniqueFd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
  if (!fd.valid()) return core::Internal("socket(): " + ErrnoText(errno));
  if (bind(fd.get(), ai->ai_addr, ai->ai_addrlen) < 0) {
    return core::Unavailable("cannot listen on " + host + ": bind: " + ErrnoText(errno));
  }
  if (listen(fd.get(), backlog) < 0) {
    return core::Unavailable("cannot listen on " + host + ": " + ErrnoText(errno));
  }
  CCLTUNE_RETURN_IF_ERROR(SetNonBlocking(fd.get()));
  return fd;
}

core::Result<int> LocalPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) < 0) {
    return core::Internal("getsockname: " + ErrnoText(errno));
  }
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

core::Result<UniqueFd> StartConnect(const std::string& host, int port) {
  CCLTUNE_ASSIGN_OR_RETURN(AddrInfoPtr ai, Resolve(host, port, false));
  UniqueFd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
  if (!fd.valid()) return core::Internal("socket(): " + ErrnoText(errno));
  CCLTUNE_RETURN_IF_ERROR(ConfigureStream(fd.get()));
  if (connect(fd.get(), ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
    return core::Unavailable("connect to " + host + ":" + std::to_string(port) + ": " +
                             ErrnoText(errno));
  }
  return fd;
}

core::Result<UniqueFd> AcceptOne(int listen_fd) {
  const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED || errno == EINTR) {
      return UniqueFd();
    }
    return core::Internal("accept: " + ErrnoText(errno));
  }
  UniqueFd owned(fd);
  CCLTUNE_RETURN_IF_ERROR(ConfigureStream(owned.get()));
  return owned;
}

int SocketError(int fd) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return errno;
  return err;
}

}  // namespace ccltune::worker::host
