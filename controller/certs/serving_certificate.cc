// ServingCertificate (serving_certificate.h) on OpenSSL's certificate callback.
#include "controller/certs/serving_certificate.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace ccltune::controller {

struct ServingCertificate::Pair {
  X509* cert = nullptr;
  EVP_PKEY* key = nullptr;
  std::string cert_pem;
  ~Pair() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

namespace {

template <typename T>
T* ReadPem(const std::string& pem, T* (*read)(BIO*, T**, pem_password_cb*, void*)) {
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (b == nullptr) return nullptr;
  T* out = read(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  return out;
}

}  // namespace

ServingCertificate::ServingCertificate() = default;
ServingCertificate::~ServingCertificate() = default;

core::Status ServingCertificate::Set(const std::string& cert_pem, const std::string& key_pem) {
  auto pair = std::make_shared<Pair>();
  pair->cert = ReadPem<X509>(cert_pem, PEM_read_bio_X509);
  pair->key = ReadPem<EVP_PKEY>(key_pem, PEM_read_bio_PrivateKey);
  if (pair->cert == nullptr || pair->key == nullptr)
    return core::InvalidArgument("serving certificate: tls.crt or tls.key is not PEM");
  if (X509_check_private_key(pair->cert, pair->key) != 1)
    return core::InvalidArgument("serving certificate: tls.key does not match tls.crt");
  pair->cert_pem = cert_pem;
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(pair);
  return core::Status::Ok();
}

std::shared_ptr<const ServingCertificate::Pair> ServingCertificate::Current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

bool ServingCertificate::ready() const { return Current() != nullptr; }

std::string ServingCertificate::cert_pem() const {
  auto p = Current();
  return p ? p->cert_pem : "";
}

// Per handshake: SSL_use_* take their own references, so a rotation in between is harmless.
int ServingCertificate::OnHandshake(void* ssl, void* self) {
  auto pair = static_cast<ServingCertificate*>(self)->Current();
  if (!pair) return 0;  // nothing to present yet: the handshake fails
  SSL* s = static_cast<SSL*>(ssl);
  return SSL_use_certificate(s, pair->cert) == 1 && SSL_use_PrivateKey(s, pair->key) == 1 ? 1 : 0;
}

void ServingCertificate::AttachTo(void* ssl_ctx) {
  SSL_CTX_set_cert_cb(
      static_cast<SSL_CTX*>(ssl_ctx), [](SSL* ssl, void* self) { return OnHandshake(ssl, self); },
      this);
}

}  // namespace ccltune::controller
