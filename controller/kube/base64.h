// Base64 for what the API server hands out or takes base64-encoded (kubeconfig certificate
// data, Secret values, an admission webhook's JSONPatch). Decoding is lenient like kubectl:
// padding and line breaks are skipped.
#pragma once

#include <string>

namespace ccltune::controller {

std::string Base64Decode(const std::string& in);
std::string Base64Encode(const std::string& in);  // standard alphabet, padded

}  // namespace ccltune::controller
