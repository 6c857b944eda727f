// On/off environment switches ("0" or "1"), shared by the worker (CCLTUNE_PEER_MEMORY,
// CCLTUNE_BUFFER_ROTATION) and the runtime (CCLTUNE_PEER_MEMORY). Header-only.
#pragma once

#include <string>

#include "core/base/status.h"

namespace ccltune::core {

// Unset or "1": on; "0": off. Anything else is InvalidArgument naming the variable and what
// it allows (a typo must not silently leave the default in place).
inline Result<bool> EnvSwitch(const char* name, const char* value, const char* off,
                              const char* on) {
  if (value == nullptr || std::string(value) == "1") return true;
  if (std::string(value) == "0") return false;
  return InvalidArgument(std::string(name) + ": '" + value + "' is not one of 0 (" + off +
                         "), 1 (" + on + ", the default)");
}

}  // namespace ccltune::core
