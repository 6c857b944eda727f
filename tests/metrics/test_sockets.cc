#include "tests/metrics/test_sockets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace ccltune::testing {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  return addr;
}

core::Status Errno(const char* what) {
  return core::Unavailable(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

core::Result<UniqueFd> ConnectSilently(int port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr = Loopback(port);
  if (!fd.valid() || connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return Errno("connect");
  return fd;
}

core::Result<SilentListener> ListenWithoutAccepting() {
  SilentListener out{UniqueFd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)), 0};
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof addr;
  if (!out.fd.valid() || bind(out.fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(out.fd.get(), 4) != 0 ||
      getsockname(out.fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return Errno("listen");
  out.port = ntohs(addr.sin_port);
  return out;
}

}  // namespace ccltune::testing
