// Self-signed certificates for the webhook's HTTPS (OpenSSL): a CA and a serving certificate it
// signs (ECDSA P-256, SHA-256, subjectAltName for every host), as PEM. Each rotation makes a
// new CA, so no CA key is ever stored (cert_rotator.h). Pure functions, thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace ccltune::controller {

struct CertPair {
  std::string cert_pem;
  std::string key_pem;  // never logged
};

struct Validity {
  std::chrono::system_clock::time_point not_before, not_after;
};

core::Result<CertPair> MakeCa(const std::string& common_name, std::chrono::seconds validity);
// `hosts`: DNS names and IP addresses (an entry that parses as an IP becomes IP:…).
core::Result<CertPair> MakeServingCert(const CertPair& ca, const std::vector<std::string>& hosts,
                                       std::chrono::seconds validity);
// Of the first certificate in `pem`; InvalidArgument when none parses.
core::Result<Validity> ValidityOf(const std::string& pem);
// Whether `pair`'s certificate and key belong together (a half-written Secret does not).
bool KeyMatches(const CertPair& pair);

}  // namespace ccltune::controller
