// The parts of libsodium the core calls — its only crypto library (Debian: libsodium-dev to build,
// libsodium23 at run time; 1.0.18 in bookworm, so no HKDF of its own: ControlPlane builds it on HMAC).
//   ChaCha20-Poly1305, the IETF construction of RFC 8439 (96-bit nonce, 16-byte tag): the envelope
//   HMAC-SHA256 (any key length, streamed): teacher MACs, the secret handshake's proof and HKDF
//   scrypt with explicit N, r, p: a teacher key typed as a passphrase
//   initialisation, memory zeroing, constant-time comparison
#include <sodium/core.h>
#include <sodium/utils.h>
#include <sodium/crypto_aead_chacha20poly1305.h>
#include <sodium/crypto_auth_hmacsha256.h>
#include <sodium/crypto_pwhash_scryptsalsa208sha256.h>
#include <sodium/crypto_verify_32.h>
