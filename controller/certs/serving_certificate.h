// ServingCertificate: the certificate and key an HTTPS server presents, replaceable while it
// serves. The server's SSL_CTX asks for them on every handshake (AttachTo), so a rotation
// (cert_rotator.h) takes effect for the next connection without restarting the listener.
// Thread-safe: Set from the rotator, handshakes on the server's threads.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "core/base/status.h"

namespace ccltune::controller {

class ServingCertificate {
 public:
  ServingCertificate();
  ~ServingCertificate();
  ServingCertificate(const ServingCertificate&) = delete;
  ServingCertificate& operator=(const ServingCertificate&) = delete;

  // InvalidArgument when the PEMs do not parse or do not belong together; the previous pair
  // stays in use then.
  core::Status Set(const std::string& cert_pem, const std::string& key_pem);
  bool ready() const;
  std::string cert_pem() const;  // the one presented now (empty before the first Set)
  // `ssl_ctx` is an SSL_CTX*: installs the per-handshake callback that presents the current
  // pair. This object must outlive the context.
  void AttachTo(void* ssl_ctx);

 private:
  struct Pair;
  std::shared_ptr<const Pair> Current() const;
  static int OnHandshake(void* ssl, void* self);

  mutable std::mutex mu_;
  std::shared_ptr<const Pair> current_;
};

}  // namespace ccltune::controller
