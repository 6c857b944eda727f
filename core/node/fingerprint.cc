// Fingerprint = first 16 hex of SHA-256 over the compact, key-sorted JSON of the inputs.
// nlohmann::json objects are std::map-backed, so dump() is already key-sorted and compact.
#include "core/node/fingerprint.h"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>

namespace ccltune::core {

nlohmann::json FingerprintJson(const FingerprintInput& in) {
  return nlohmann::json{{"backend", in.backend},           {"gpuModel", in.gpu_model},
                        {"gpusPerNode", in.gpus_per_node}, {"nodes", in.nodes},
                        {"p2p", in.p2p_summary},           {"ncclVersion", in.nccl_version},
                        {"cudaRuntime", in.cuda_runtime},  {"driver", in.driver}};
}

std::string CanonicalFingerprintJson(const FingerprintInput& in) {
  return FingerprintJson(in).dump();
}

std::string Sha256Hex(const std::string& data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // These calls fail only on allocation failure; an empty string marks that (never a
  // valid digest) rather than aborting.
  if (ctx == nullptr || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest, &len) != 1) {
    return "";
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

std::string Fingerprint(const FingerprintInput& in) {
  return Sha256Hex(CanonicalFingerprintJson(in)).substr(0, 16);
}

Status CheckPinnedFingerprint(const std::string& fp, const std::string& source) {
  const bool ok = !fp.empty() && fp.size() <= 64 && std::all_of(fp.begin(), fp.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '_';
  });
  if (ok) return Status::Ok();
  return InvalidArgument(source + "='" + fp +
                         "' is not a fingerprint (1-64 of 0-9, a-z, '-', '_')");
}

}  // namespace ccltune::core
