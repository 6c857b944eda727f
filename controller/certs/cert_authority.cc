// cert_authority.h on OpenSSL 3. Every OpenSSL object is owned by a unique_ptr with its free
// function, so an early return leaks nothing.
#include "controller/certs/cert_authority.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

namespace ccltune::controller {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;

core::Status Fail(const std::string& what) { return core::Internal("certificate: " + what); }

BioPtr MemBio(const std::string& s) {
  return BioPtr(BIO_new_mem_buf(s.data(), static_cast<int>(s.size())));
}

X509Ptr ReadCert(const std::string& pem) {
  BioPtr b = MemBio(pem);
  return X509Ptr(b ? PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr) : nullptr);
}

KeyPtr ReadKey(const std::string& pem) {
  BioPtr b = MemBio(pem);
  return KeyPtr(b ? PEM_read_bio_PrivateKey(b.get(), nullptr, nullptr, nullptr) : nullptr);
}

std::string BioText(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return std::string(data, static_cast<size_t>(n));
}

core::Result<CertPair> ToPem(X509* cert, EVP_PKEY* key) {
  BioPtr c(BIO_new(BIO_s_mem())), k(BIO_new(BIO_s_mem()));
  if (!c || !k || PEM_write_bio_X509(c.get(), cert) != 1 ||
      PEM_write_bio_PrivateKey(k.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return Fail("cannot write PEM");
  return CertPair{BioText(c.get()), BioText(k.get())};
}

bool AddExt(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named `cn`, valid from a minute ago (clock skew) for `validity`.
core::Result<X509Ptr> NewCert(EVP_PKEY* key, const std::string& cn, std::chrono::seconds validity) {
  X509Ptr cert(X509_new());
  BnPtr serial(BN_new());
  if (!cert || !serial || X509_set_version(cert.get(), 2) != 1 ||
      BN_rand(serial.get(), 64, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(validity.count())) ==
          nullptr ||
      X509_set_pubkey(cert.get(), key) != 1 ||
      X509_NAME_add_entry_by_txt(X509_get_subject_name(cert.get()), "CN", MBSTRING_ASC,
                                 reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                 0) != 1)
    return Fail("cannot fill in " + cn);
  return cert;
}

std::string SubjectAltNames(const std::vector<std::string>& hosts) {
  std::string out;
  for (const auto& h : hosts) {
    unsigned char buf[16];
    const bool ip =
        inet_pton(AF_INET, h.c_str(), buf) == 1 || inet_pton(AF_INET6, h.c_str(), buf) == 1;
    out += (out.empty() ? "" : ",") + std::string(ip ? "IP:" : "DNS:") + h;
  }
  return out;
}

}  // namespace

core::Result<CertPair> MakeCa(const std::string& common_name, std::chrono::seconds validity) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return Fail("cannot generate a key");
  CCLTUNE_ASSIGN_OR_RETURN(X509Ptr cert, NewCert(key.get(), common_name, validity));
  X509* c = cert.get();
  if (X509_set_issuer_name(c, X509_get_subject_name(c)) != 1 ||
      !AddExt(c, c, NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExt(c, c, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExt(c, c, NID_subject_key_identifier, "hash") ||
      X509_sign(c, key.get(), EVP_sha256()) == 0)
    return Fail("cannot sign the CA");
  return ToPem(c, key.get());
}

core::Result<CertPair> MakeServingCert(const CertPair& ca, const std::vector<std::string>& hosts,
                                       std::chrono::seconds validity) {
  if (hosts.empty()) return core::InvalidArgument("serving certificate: no host names");
  X509Ptr ca_cert = ReadCert(ca.cert_pem);
  KeyPtr ca_key = ReadKey(ca.key_pem);
  if (!ca_cert || !ca_key) return core::InvalidArgument("serving certificate: unreadable CA");
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return Fail("cannot generate a key");
  CCLTUNE_ASSIGN_OR_RETURN(X509Ptr cert, NewCert(key.get(), hosts.front(), validity));
  X509* c = cert.get();
  if (X509_set_issuer_name(c, X509_get_subject_name(ca_cert.get())) != 1 ||
      !AddExt(c, ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExt(c, ca_cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
      !AddExt(c, ca_cert.get(), NID_ext_key_usage, "serverAuth") ||
      !AddExt(c, ca_cert.get(), NID_subject_key_identifier, "hash") ||
      !AddExt(c, ca_cert.get(), NID_authority_key_identifier, "keyid:always") ||
      !AddExt(c, ca_cert.get(), NID_subject_alt_name, SubjectAltNames(hosts)) ||
      X509_sign(c, ca_key.get(), EVP_sha256()) == 0)
    return Fail("cannot sign the serving certificate");
  return ToPem(c, key.get());
}

core::Result<Validity> ValidityOf(const std::string& pem) {
  X509Ptr cert = ReadCert(pem);
  if (!cert) return core::InvalidArgument("certificate: no PEM certificate");
  std::tm from{}, to{};
  if (ASN1_TIME_to_tm(X509_get0_notBefore(cert.get()), &from) != 1 ||
      ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &to) != 1)
    return core::InvalidArgument("certificate: unreadable validity");
  return Validity{std::chrono::system_clock::from_time_t(timegm(&from)),
                  std::chrono::system_clock::from_time_t(timegm(&to))};
}

bool KeyMatches(const CertPair& pair) {
  X509Ptr cert = ReadCert(pair.cert_pem);
  KeyPtr key = ReadKey(pair.key_pem);
  return cert && key && X509_check_private_key(cert.get(), key.get()) == 1;
}

}  // namespace ccltune::controller
