// Base64 decoding for what the API server hands out base64-encoded (kubeconfig
// certificate data, Secret values). Lenient like kubectl: padding and line breaks are
// skipped.
#pragma once

#include <string>

namespace ccltune::controller {

std::string Base64Decode(const std::string& in);

}  // namespace ccltune::controller
