import Crypto

/// HMAC-SHA256 (RFC 2104) over swift-crypto, for the teacher key's stop-all MAC (Protocol.md §7.6).
package enum HMACSHA256 {
    /// The full 32-byte MAC of `message` under `key`.
    package static func authenticate(_ message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(message), using: SymmetricKey(data: Array(key))))
    }
}
