// libsodium's ChaCha20-Poly1305 AEAD (the IETF construction of RFC 8439: 96-bit nonce, 16-byte tag),
// its initialisation and its memory zeroing: the only parts of the library the project calls.
// Debian: libsodium-dev to build, libsodium23 at run time.
#include <sodium/core.h>
#include <sodium/utils.h>
#include <sodium/crypto_aead_chacha20poly1305.h>
