import CSodium
import Synchronization

/// One key of the envelope's AEAD — ChaCha20 with a 16-byte one-time-MAC tag, the IETF
/// construction of RFC 8439 §2.8 (96-bit nonce) — sealing and opening through libsodium
/// (`crypto_aead_chacha20poly1305_ietf_encrypt_detached` / `decrypt_detached`, module CSodium),
/// in place, on buffers the caller owns: nothing is allocated per datagram.
///
/// Contracts and traps:
/// - The key's 32 bytes live only inside this object and are zeroed (`sodium_memzero`) when the
///   last reference goes. There is no way to read them back, compare or hash them.
/// - ``open(nonce:aad:text:tag:)`` checks the tag before it decrypts; when the tag does not
///   verify it returns false and `text` is left all zero (libsodium's rule): no plaintext escapes.
/// - A (key, nonce) pair must never seal two different messages; the envelope's nonce is its
///   counter, which the sender never repeats (``SealedEnvelope``).
/// - Package access only: the cipher is plumbing of the control plane, not API of a library product.
package final class AEADKey: Sendable {
    package static let keySize = 32
    package static let tagSize = 16
    package static let nonceSize = 12

    /// Locked only to satisfy `Sendable` without an unchecked claim: the bytes are written once,
    /// read by every seal and open, and zeroed by `deinit`. Uncontended, the lock costs a few ns.
    private let key: Mutex<KeyBytes>

    private struct KeyBytes {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    }

    private init(bytes: KeyBytes) {
        Sodium.require()
        key = Mutex(bytes)
    }

    /// `key` must be 32 bytes.
    package convenience init(_ key: UnsafeRawBufferPointer) {
        precondition(key.count == Self.keySize, "the AEAD takes a 32-byte key")
        var bytes = KeyBytes()
        withUnsafeMutableBytes(of: &bytes.words) { $0.copyMemory(from: key) }
        self.init(bytes: bytes)
        withUnsafeMutableBytes(of: &bytes.words) { sodium_memzero($0.baseAddress, $0.count) }
    }

    /// `key` must be 32 bytes.
    package convenience init(_ key: [UInt8]) {
        precondition(key.count == Self.keySize, "the AEAD takes a 32-byte key")
        var bytes = KeyBytes()
        key.withUnsafeBytes { source in withUnsafeMutableBytes(of: &bytes.words) { $0.copyMemory(from: source) } }
        self.init(bytes: bytes)
        withUnsafeMutableBytes(of: &bytes.words) { sodium_memzero($0.baseAddress, $0.count) }
    }

    deinit {
        key.withLock { k in withUnsafeMutableBytes(of: &k.words) { sodium_memzero($0.baseAddress, $0.count) } }
    }

    /// The 96-bit nonce, held as its 12 bytes in order.
    package struct Nonce: Sendable, Equatable {
        private var bytes: (UInt32, UInt32, UInt32) = (0, 0, 0)

        /// 12 bytes.
        package init(bytes: some Collection<UInt8>) {
            precondition(bytes.count == AEADKey.nonceSize, "the AEAD's nonce is 12 bytes")
            withUnsafeMutableBytes(of: &self.bytes) { raw in
                for (i, b) in bytes.enumerated() { raw[i] = b }
            }
        }

        /// 4 zero bytes ‖ `counter` (UInt64 big-endian): the envelope's nonce (Protocol.md §8.3).
        package init(counter: UInt64) {
            bytes = (0, UInt32(truncatingIfNeeded: counter >> 32).bigEndian, UInt32(truncatingIfNeeded: counter).bigEndian)
        }

        package static func == (a: Nonce, b: Nonce) -> Bool {
            a.bytes.0 == b.bytes.0 && a.bytes.1 == b.bytes.1 && a.bytes.2 == b.bytes.2
        }

        func withPointer<R>(_ body: (UnsafePointer<UInt8>) -> R) -> R {
            withUnsafeBytes(of: bytes) { body($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        }
    }

    /// Encrypts `text` in place and writes the 16-byte tag over `aad` and the ciphertext into `tag`.
    package func seal(nonce: Nonce, aad: UnsafeRawBufferPointer, text: UnsafeMutableRawBufferPointer,
                      tag: UnsafeMutableRawBufferPointer) {
        precondition(tag.count == Self.tagSize, "the AEAD's tag is 16 bytes")
        var empty: UInt8 = 0
        let result = withBytes(text, orEmpty: &empty) { t in
            key.withLock { k in
                withUnsafeBytes(of: &k.words) { kb in
                    nonce.withPointer { n in
                        crypto_aead_chacha20poly1305_ietf_encrypt_detached(
                            t, tag.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                            t, UInt64(text.count),
                            aad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(aad.count),
                            nil, n, kb.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        precondition(result == 0, "libsodium refused to seal")
    }

    /// Checks `tag` over `aad` and the ciphertext in `text`; only if it verifies, decrypts `text`
    /// in place and returns true. Otherwise returns false with `text` zeroed.
    package func open(nonce: Nonce, aad: UnsafeRawBufferPointer, text: UnsafeMutableRawBufferPointer,
                      tag: UnsafeRawBufferPointer) -> Bool {
        guard tag.count == Self.tagSize else {
            if let base = text.baseAddress { sodium_memzero(base, text.count) }
            return false
        }
        var empty: UInt8 = 0
        let result = withBytes(text, orEmpty: &empty) { t in
            key.withLock { k in
                withUnsafeBytes(of: &k.words) { kb in
                    nonce.withPointer { n in
                        crypto_aead_chacha20poly1305_ietf_decrypt_detached(
                            t, nil, t, UInt64(text.count), tag.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            aad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(aad.count),
                            n, kb.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        return result == 0
    }

    /// libsodium wants a non-null text pointer even for zero bytes: an empty buffer may have none.
    private func withBytes(_ text: UnsafeMutableRawBufferPointer, orEmpty empty: inout UInt8,
                           _ body: (UnsafeMutablePointer<UInt8>) -> Int32) -> Int32 {
        if let base = text.baseAddress { return body(base.assumingMemoryBound(to: UInt8.self)) }
        return withUnsafeMutablePointer(to: &empty) { body($0) }
    }
}
