/* See ssl_compat.c: the "libcrypto.so" civetweb asks for, resolving to libcrypto.so.3. */
int ccltune_civetweb_crypto_compat = 1;
