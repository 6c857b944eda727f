// Whether a TCP port can be listened on, asked before civetweb is: civetweb's own words for
// a taken port ("null context when constructing CivetServer...", a log line of its own) name
// neither the flag nor the port, so callers check first and say which flag gave the port.
#pragma once

#include <string>

#include "core/base/status.h"

namespace ccltune::worker {

// Binds a socket to `address`:`port` (IPv4, SO_REUSEADDR as civetweb does) and closes it.
// Unavailable "port 9400 on 0.0.0.0 is in use (Address already in use)" when it cannot;
// InvalidArgument for an address that is not IPv4. A port free now may be taken a moment
// later: this is for a clear message, not a reservation.
core::Status CheckPortFree(const std::string& address, int port);

}  // namespace ccltune::worker
