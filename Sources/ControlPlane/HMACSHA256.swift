import CSodium

/// HMAC-SHA256 (RFC 2104) through libsodium's streaming `crypto_auth_hmacsha256_*`, which takes a
/// key of any length (a longer one than 64 bytes is hashed first, as the RFC says): the teacher
/// key's MACs (Protocol.md §7.6), the secret handshake's proof, and HKDF below.
package enum HMACSHA256 {
    package static let size = 32

    /// The full 32-byte MAC of the concatenation of `parts` under `key`.
    package static func authenticate(joining parts: [UInt8]..., key: some Collection<UInt8>) -> [UInt8] {
        authenticate(parts: parts, key: key)
    }

    /// The full 32-byte MAC of `message` under `key`.
    package static func authenticate(_ message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        authenticate(parts: [Array(message)], key: key)
    }

    static func authenticate(parts: [[UInt8]], key: some Collection<UInt8>) -> [UInt8] {
        Sodium.require()
        var state = crypto_auth_hmacsha256_state()
        defer { withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) } }
        var keyBytes = Array(key)
        defer { keyBytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        _ = Sodium.withBytes(keyBytes) { crypto_auth_hmacsha256_init(&state, $0, $1) }
        for part in parts {
            _ = Sodium.withBytes(part) { crypto_auth_hmacsha256_update(&state, $0, UInt64($1)) }
        }
        var out = [UInt8](repeating: 0, count: size)
        _ = out.withUnsafeMutableBufferPointer { crypto_auth_hmacsha256_final(&state, $0.baseAddress!) }
        return out
    }

    /// Constant-time comparison of two 32-byte values (false when either is not 32 bytes).
    package static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == size, b.count == size else { return false }
        return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in crypto_verify_32(x.baseAddress!, y.baseAddress!) == 0 } }
    }
}

/// HKDF with HMAC-SHA256 (RFC 5869): extract, then expand to `count` bytes (at most 255 × 32).
/// libsodium 1.0.18 (Debian bookworm's) has no HKDF, so it is built here on ``HMACSHA256``;
/// RFC 5869's test vectors pin it (ControlPlaneTests).
package enum HKDFSHA256 {
    package static func derive(secret: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        precondition(count > 0 && count <= 255 * HMACSHA256.size, "HKDF-SHA256 gives 1…8160 bytes")
        // An empty salt is HashLen zero bytes (RFC 5869 §2.2); HMAC pads a short key with zeros,
        // so the two are the same MAC.
        var prk = HMACSHA256.authenticate(secret, key: salt)
        defer { prk.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        var out: [UInt8] = []
        out.reserveCapacity(count + HMACSHA256.size)
        var block: [UInt8] = []
        var index: UInt8 = 1
        while out.count < count {
            block = HMACSHA256.authenticate(joining: block, info, [index], key: prk)
            out += block
            index &+= 1
        }
        block.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
        if out.count > count {
            out.withUnsafeMutableBytes { sodium_memzero($0.baseAddress! + count, $0.count - count) }
            out.removeLast(out.count - count)
        }
        return out
    }
}

/// scrypt (RFC 7914) through libsodium's `crypto_pwhash_scryptsalsa208sha256_ll`, with the cost
/// given explicitly (N, r, p), as a teacher key typed as a passphrase is stretched.
package enum Scrypt {
    /// Nil when libsodium refuses the parameters or cannot get the memory.
    package static func derive(password: [UInt8], salt: [UInt8], n: UInt64, r: UInt32, p: UInt32, count: Int) -> [UInt8]? {
        Sodium.require()
        precondition(count > 0, "scrypt gives at least one byte")
        var out = [UInt8](repeating: 0, count: count)
        let result = Sodium.withBytes(password) { pw, pwCount in
            Sodium.withBytes(salt) { s, sCount in
                out.withUnsafeMutableBufferPointer { o in
                    crypto_pwhash_scryptsalsa208sha256_ll(pw, pwCount, s, sCount, n, r, p, o.baseAddress!, o.count)
                }
            }
        }
        return result == 0 ? out : nil
    }
}
