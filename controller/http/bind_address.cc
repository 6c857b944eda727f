#include "controller/http/bind_address.h"

#include <arpa/inet.h>

#include <cctype>

namespace ccltune::controller {

std::string BindAddress::ListeningPorts() const {
  return host.empty() ? std::to_string(port) : host + ":" + std::to_string(port);
}

core::Result<BindAddress> ParseBindAddress(const std::string& flag, const std::string& value) {
  auto bad = [&](const std::string& why) {
    return core::InvalidArgument(flag + ": '" + value + "' " + why +
                                 "; expected [HOST]:PORT, HOST an IPv4 address or empty for "
                                 "every interface, PORT 0-65535 (e.g. ':8081')");
  };
  const std::size_t colon = value.rfind(':');
  if (colon == std::string::npos) return bad("has no ':PORT'");
  BindAddress out{value.substr(0, colon), 0};
  const std::string port = value.substr(colon + 1);
  if (port.empty() || port.size() > 5) return bad("has no port of 1 to 5 digits");
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad("has a port that is not a number");
  }
  out.port = std::stoi(port);
  if (out.port > 65535) return bad("has a port over 65535");
  in_addr parsed{};
  if (!out.host.empty() && inet_pton(AF_INET, out.host.c_str(), &parsed) != 1) {
    return bad("has a host that is not an IPv4 address");
  }
  return out;
}

core::Result<BindAddress> ListenAddress(const std::string& bind_flag, const std::string& bind,
                                        int port) {
  if (bind.empty()) return BindAddress{"", port};
  return ParseBindAddress(bind_flag, bind);
}

}  // namespace ccltune::controller
