// BindAddress: where a listener of the controller binds, from a flag spelled as
// controller-runtime's --health-probe-bind-address: "[HOST]:PORT", HOST an IPv4 address or
// empty for every interface, PORT 0-65535 (0: any free port, which the server reports).
#pragma once

#include <string>

#include "core/base/status.h"

namespace ccltune::controller {

struct BindAddress {
  std::string host;  // empty: every interface
  int port = 0;

  // civetweb's listening_ports value: "8081" or "127.0.0.1:8081".
  std::string ListeningPorts() const;
};

// InvalidArgument naming `flag` and the accepted form for anything else (no port, a port
// out of range, a host name, IPv6).
core::Result<BindAddress> ParseBindAddress(const std::string& flag, const std::string& value);

// A listener that has a port flag and a bind-address flag (--metrics-port and
// --metrics-bind-address; main.cc checks that both, when given, name one port): `bind` parsed
// as above when set, else every interface on `port`, as before the bind-address flags existed.
core::Result<BindAddress> ListenAddress(const std::string& bind_flag, const std::string& bind,
                                        int port);

}  // namespace ccltune::controller
