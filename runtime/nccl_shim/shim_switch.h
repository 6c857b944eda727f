// CCLTUNE_NCCL, the shim's switch, read from its value alone: header-only, so the load-time
// environment setup (load_env.cc) and ShimOn (serve.h) read it by one rule.
#pragma once

#include <cstring>

namespace ccltune::shim {

// On: unset, "on" or "1". Off: "off" or "0". Anything else is invalid, and the shim then
// forwards every call (ShimOn says so once).
enum class ShimSwitch { kOn, kOff, kInvalid };

inline ShimSwitch ShimSwitchOf(const char* v) {
  if (v == nullptr || std::strcmp(v, "on") == 0 || std::strcmp(v, "1") == 0) return ShimSwitch::kOn;
  if (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0) return ShimSwitch::kOff;
  return ShimSwitch::kInvalid;
}

}  // namespace ccltune::shim
