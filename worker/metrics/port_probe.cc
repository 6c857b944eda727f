// CheckPortFree (port_probe.h).
#include "worker/metrics/port_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "core/base/unique_fd.h"

namespace ccltune::worker {

core::Status CheckPortFree(const std::string& address, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1)
    return core::InvalidArgument("'" + address + "' is not an IPv4 address");
  core::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return core::Unavailable(std::string("socket(): ") + std::strerror(errno));
  const int one = 1;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    return core::Unavailable("port " + std::to_string(port) + " on " + address + " is " +
                             (err == EADDRINUSE ? "in use" : "not available") + " (" +
                             std::strerror(err) + ")");
  }
  return core::Status::Ok();
}

}  // namespace ccltune::worker
