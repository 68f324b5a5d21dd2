import Crypto
import Foundation

/// The key schedule of `--accept secret` (Protocol.md "Security"), over swift-crypto:
///
/// ```
/// proof key  = HKDF-SHA256(ikm: secret, salt: "", info: "AnalogRemote v1 proof", 32 bytes)
/// proof      = HMAC-SHA256(proof key, "AR proof" ‖ receiver nonce ‖ controller nonce)     32 bytes
/// keys       = HKDF-SHA256(ikm: secret, salt: receiver nonce ‖ controller nonce,
///                          info: "AnalogRemote v1 keys" ‖ connection id (UInt64 BE), 64 bytes)
/// controller → receiver key = keys[0..<32], receiver → controller key = keys[32..<64]
/// ```
///
/// The proof shows the controller knows the secret without sending it; a captured proof is
/// worthless for another handshake (the receiver's nonce is fresh each time), and testing
/// guesses against it offline means trying 2^96 secrets.
public enum SecretHandshake {
    static let proofInfo = Array("AnalogRemote v1 proof".utf8)
    static let proofLabel = Array("AR proof".utf8)
    static let keysInfo = Array("AnalogRemote v1 keys".utf8)

    /// Fresh 16 random bytes from the system's CSPRNG.
    public static func nonce() -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<ControlMessage.nonceSize).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    static func proofKey(_ secret: RobotSecret) -> SymmetricKey {
        HKDF<Crypto.SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret.bytes), salt: [UInt8](),
                               info: proofInfo, outputByteCount: 32)
    }

    public static func proof(secret: RobotSecret, receiverNonce: [UInt8], controllerNonce: [UInt8]) -> [UInt8] {
        Array(HMAC<Crypto.SHA256>.authenticationCode(for: proofLabel + receiverNonce + controllerNonce, using: proofKey(secret)))
    }

    /// Constant-time check of a proof.
    public static func verify(_ mac: [UInt8], secret: RobotSecret, receiverNonce: [UInt8], controllerNonce: [UInt8]) -> Bool {
        guard mac.count == ControlMessage.proofSize else { return false }
        return HMAC<Crypto.SHA256>.isValidAuthenticationCode(mac, authenticating: proofLabel + receiverNonce + controllerNonce,
                                                      using: proofKey(secret))
    }

    public static func keys(secret: RobotSecret, receiverNonce: [UInt8], controllerNonce: [UInt8],
                            connectionID: UInt64) -> SessionKeys {
        var info = keysInfo
        for shift in stride(from: 56, through: 0, by: -8) { info.append(UInt8(truncatingIfNeeded: connectionID >> UInt64(shift))) }
        let both = HKDF<Crypto.SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret.bytes), salt: receiverNonce + controllerNonce,
                                          info: info, outputByteCount: 64)
        let bytes = both.withUnsafeBytes { Array($0) }
        return SessionKeys(controllerToReceiver: SymmetricKey(data: bytes[0..<32]),
                           receiverToController: SymmetricKey(data: bytes[32..<64]))
    }
}

/// The two keys of one authenticated connection, one per direction.
public struct SessionKeys: Sendable {
    public let controllerToReceiver: SymmetricKey
    public let receiverToController: SymmetricKey
}

/// The authenticated envelope (Protocol.md "Security"): a whole datagram — an 8-byte state packet
/// or a control datagram — sealed with ChaCha20-Poly1305 under the connection's key for its
/// direction.
///
/// ```
///  0 … 27   version-2 header, type 0x12 (sealed), sequence 0, ack 0, fragment 0 of 1,
///           the connection id
///  28 … 35  counter (UInt64 BE): 1, 2, 3… per direction; the AEAD nonce is 4 zero bytes ‖ counter
///  36 …     ciphertext (as long as the sealed datagram), then the 16-byte Poly1305 tag
/// ```
/// The additional authenticated data is bytes 0…35 (header and counter): nothing of the datagram
/// can change without the tag failing.
public struct SealedEnvelope: Hashable, Sendable {
    public static let headerSize = ControlHeader.extendedSize + 8
    public static let tagSize = 16
    public static let overhead = headerSize + tagSize
    /// The largest datagram that fits in an envelope of at most 1024 bytes.
    public static let maxInner = ControlHeader.maxDatagram - overhead

    public var header: ControlHeader
    public var counter: UInt64
    /// The sealed datagram, once opened.
    public var inner: [UInt8]

    /// Why an envelope was refused. Nothing of it reaches the receiver's engine.
    public enum Failure: String, Error, Hashable, Sendable {
        /// Not an envelope: wrong length, header or fields.
        case malformed
        /// Counter 0, already taken, or too far behind (``ReplayWindow``).
        case replayed
        /// The tag did not authenticate (forged, truncated, changed, or the wrong key).
        case forged
    }

    /// Seals `inner` (at most ``maxInner`` bytes).
    public static func seal(_ inner: [UInt8], connectionID: UInt64, instance: UInt32, counter: UInt64,
                            key: SymmetricKey) -> [UInt8] {
        precondition(inner.count <= maxInner && counter != 0 && connectionID != 0)
        let header = ControlHeader(type: .sealed, connection: instance, connectionID: connectionID)
        var prefix = header.bytes
        for shift in stride(from: 56, through: 0, by: -8) { prefix.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift))) }
        // The nonce is fixed-size: it cannot fail.
        let box = try! ChaChaPoly.seal(inner, using: key, nonce: nonce(counter), authenticating: prefix)
        return prefix + Array(box.ciphertext) + Array(box.tag)
    }

    /// The header and counter of an envelope, before anything is authenticated.
    public static func peek(_ datagram: [UInt8]) -> (header: ControlHeader, counter: UInt64)? {
        guard datagram.count >= overhead, datagram.count <= ControlHeader.maxDatagram,
              let d = try? ControlDatagram.decode(Array(datagram[..<headerSize])),
              d.header.type == .sealed, d.header.connectionID != 0, d.header.sequence == 0,
              d.header.ack == 0, d.header.fragmentIndex == 0, d.header.fragmentCount == 1 else { return nil }
        var counter: UInt64 = 0
        for b in datagram[ControlHeader.extendedSize..<headerSize] { counter = counter << 8 | UInt64(b) }
        return (d.header, counter)
    }

    /// Opens an envelope with `key`, checking its counter against `window` (and taking it there
    /// only once the tag authenticated).
    public static func open(_ datagram: [UInt8], key: SymmetricKey, window: inout ReplayWindow) -> Result<SealedEnvelope, Failure> {
        guard let (header, counter) = peek(datagram) else { return .failure(.malformed) }
        guard window.wouldAccept(counter) else { return .failure(.replayed) }
        let prefix = datagram[..<headerSize]
        let body = datagram[headerSize..<(datagram.count - tagSize)]
        let tag = datagram[(datagram.count - tagSize)...]
        guard let box = try? ChaChaPoly.SealedBox(nonce: nonce(counter), ciphertext: body, tag: tag),
              let plain = try? ChaChaPoly.open(box, using: key, authenticating: prefix) else {
            return .failure(.forged)
        }
        window.take(counter)
        return .success(SealedEnvelope(header: header, counter: counter, inner: Array(plain)))
    }

    static func nonce(_ counter: UInt64) -> ChaChaPoly.Nonce {
        var bytes: [UInt8] = [0, 0, 0, 0]
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift))) }
        return try! ChaChaPoly.Nonce(data: bytes)
    }
}
