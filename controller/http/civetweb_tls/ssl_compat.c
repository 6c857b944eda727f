/* Debian 12's civetweb 1.15 dlopen()s "libssl.so" and "libcrypto.so" and resolves its TLS
 * functions by name, among them SSL_get_peer_certificate, which OpenSSL 3 no longer exports
 * (it became SSL_get1_peer_certificate). Its TLS then cannot start (mg_init_library(TLS)
 * fails; without it a worker calls a null pointer). These two tiny libraries carry the sonames
 * civetweb asks for: the controller links them, so they are loaded before civetweb asks, and
 * glibc's dlopen() answers a name that matches a loaded object's soname with that object.
 * Symbols resolve through their dependencies, the real libssl.so.3 and libcrypto.so.3. */
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate /* OpenSSL 3's header maps the old name onto the new one */
X509* SSL_get_peer_certificate(const SSL* ssl) { return SSL_get1_peer_certificate(ssl); }
