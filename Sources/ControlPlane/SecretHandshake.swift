import CSodium
import ControlWire

/// The key schedule of `--accept secret` (Protocol.md "Security"), over libsodium's HMAC-SHA256:
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
package enum SecretHandshake {
    static let proofInfo = Array("AnalogRemote v1 proof".utf8)
    static let proofLabel = Array("AR proof".utf8)
    static let keysInfo = Array("AnalogRemote v1 keys".utf8)

    /// Fresh 16 random bytes from the system's CSPRNG.
    package static func nonce() -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<ControlMessage.nonceSize).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    static func proofKey(_ secret: RobotSecret) -> [UInt8] {
        HKDFSHA256.derive(secret: secret.bytes, salt: [], info: proofInfo, count: 32)
    }

    package static func proof(secret: RobotSecret, receiverNonce: [UInt8], controllerNonce: [UInt8]) -> [UInt8] {
        var key = proofKey(secret)
        defer { key.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        return HMACSHA256.authenticate(joining: proofLabel, receiverNonce, controllerNonce, key: key)
    }

    /// Constant-time check of a proof.
    package static func verify(_ mac: [UInt8], secret: RobotSecret, receiverNonce: [UInt8], controllerNonce: [UInt8]) -> Bool {
        guard mac.count == ControlMessage.proofSize else { return false }
        return HMACSHA256.equal(mac, proof(secret: secret, receiverNonce: receiverNonce, controllerNonce: controllerNonce))
    }

    package static func keys(secret: RobotSecret, receiverNonce: [UInt8], controllerNonce: [UInt8],
                            connectionID: UInt64) -> SessionKeys {
        var info = keysInfo
        for shift in stride(from: 56, through: 0, by: -8) { info.append(UInt8(truncatingIfNeeded: connectionID >> UInt64(shift))) }
        var both = HKDFSHA256.derive(secret: secret.bytes, salt: receiverNonce + controllerNonce, info: info, count: 64)
        defer { both.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        return both.withUnsafeBytes { raw in
            SessionKeys(controllerToReceiver: AEADKey(UnsafeRawBufferPointer(rebasing: raw[0..<32])),
                        receiverToController: AEADKey(UnsafeRawBufferPointer(rebasing: raw[32..<64])))
        }
    }
}

/// The two keys of one authenticated connection, one per direction, each read once into the
/// AEAD's form (nothing is set up per datagram) and zeroed when the connection is dropped.
package struct SessionKeys: Sendable {
    package let controllerToReceiver: AEADKey
    package let receiverToController: AEADKey

    package init(controllerToReceiver: AEADKey, receiverToController: AEADKey) {
        self.controllerToReceiver = controllerToReceiver
        self.receiverToController = receiverToController
    }
}

/// The authenticated envelope (Protocol.md "Security"): a whole datagram — an 8-byte state packet
/// or a control datagram — sealed with the IETF ChaCha20 AEAD of RFC 8439 (``AEADKey``) under
/// the connection's key for its direction.
///
/// ```
///  0 … 27   version-2 header, type 0x12 (sealed), sequence 0, ack 0, fragment 0 of 1,
///           the connection id
///  28 … 35  counter (UInt64 BE): 1, 2, 3… per direction; the AEAD nonce is 4 zero bytes ‖ counter
///  36 …     ciphertext (as long as the sealed datagram), then the 16-byte tag
/// ```
/// The additional authenticated data is bytes 0…35 (header and counter): nothing of the datagram
/// can change without the tag failing.
package struct SealedEnvelope: Hashable, Sendable {
    package static let headerSize = ControlHeader.extendedSize + 8
    package static let tagSize = 16
    package static let overhead = headerSize + tagSize
    /// The largest datagram that fits in an envelope of at most 1024 bytes.
    package static let maxInner = ControlHeader.maxDatagram - overhead

    package var header: ControlHeader
    package var counter: UInt64
    /// The sealed datagram, once opened.
    package var inner: [UInt8]

    /// Why an envelope was refused. Nothing of it reaches the receiver's engine.
    package enum Failure: String, Error, Hashable, Sendable {
        /// Not an envelope: wrong length, header or fields.
        case malformed
        /// Counter 0, already taken, or too far behind (``ReplayWindow``).
        case replayed
        /// The tag did not authenticate (forged, truncated, changed, or the wrong key).
        case forged
    }

    /// Seals `inner` (at most ``maxInner`` bytes) with `key`; `counter` must never repeat under
    /// one key (it is the nonce). One allocation: the datagram returned, sealed in place.
    package static func seal(_ inner: [UInt8], connectionID: UInt64, instance: UInt32, counter: UInt64,
                             key: AEADKey) -> [UInt8] {
        precondition(inner.count <= maxInner && counter != 0 && connectionID != 0)
        let total = overhead + inner.count
        return [UInt8](unsafeUninitializedCapacity: total) { out, initialized in
            let raw = UnsafeMutableRawBufferPointer(out)
            // The version-2 header (ControlHeader(type: .sealed, connection: instance,
            // connectionID:).bytes: sequence 0, ack 0, fragment 0 of 1), then the counter.
            raw[0] = ControlHeader.magic.0; raw[1] = ControlHeader.magic.1
            raw[2] = ControlHeader.extendedVersion; raw[3] = ControlType.sealed.rawValue
            raw.storeBytes(of: instance.bigEndian, toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(of: UInt64(0), toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: UInt32(1).bigEndian, toByteOffset: 16, as: UInt32.self)
            raw.storeBytes(of: connectionID.bigEndian, toByteOffset: 20, as: UInt64.self)
            raw.storeBytes(of: counter.bigEndian, toByteOffset: ControlHeader.extendedSize, as: UInt64.self)
            let end = headerSize + inner.count
            let text = UnsafeMutableRawBufferPointer(rebasing: raw[headerSize..<end])
            inner.withUnsafeBytes { text.copyMemory(from: $0) }
            key.seal(nonce: .init(counter: counter), aad: UnsafeRawBufferPointer(rebasing: raw[..<headerSize]),
                     text: text, tag: UnsafeMutableRawBufferPointer(rebasing: raw[end...]))
            initialized = total
        }
    }

    /// The header and counter of an envelope, before anything is authenticated: the checks of
    /// ``ControlDatagram/decode(_:)`` for a version-2 header of type sealed, plus sequence 0,
    /// ack 0 and fragment 0 of 1; read in place.
    package static func peek(_ datagram: [UInt8]) -> (header: ControlHeader, counter: UInt64)? {
        guard datagram.count >= overhead, datagram.count <= ControlHeader.maxDatagram else { return nil }
        return datagram.withUnsafeBytes { d -> (header: ControlHeader, counter: UInt64)? in
            func u32(_ at: Int) -> UInt32 { UInt32(bigEndian: d.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
            func u64(_ at: Int) -> UInt64 { UInt64(bigEndian: d.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
            guard d[0] == ControlHeader.magic.0, d[1] == ControlHeader.magic.1, d[2] == ControlHeader.extendedVersion,
                  d[3] == ControlType.sealed.rawValue else { return nil }
            let instance = u32(4), connectionID = u64(20)
            // sequence 0, ack 0, then fragment index 0 and count 1 (bytes 16…19 = 0 0 0 1).
            guard instance != 0, connectionID != 0, u32(8) == 0, u32(12) == 0, u32(16) == 1 else { return nil }
            return (ControlHeader(type: .sealed, connection: instance, connectionID: connectionID), u64(ControlHeader.extendedSize))
        }
    }

    /// Opens an envelope with `key`, checking its counter against `window` (and taking it there
    /// only once the tag authenticated). One allocation: the inner datagram, opened in place.
    package static func open(_ datagram: [UInt8], key: AEADKey, window: inout ReplayWindow) -> Result<SealedEnvelope, Failure> {
        guard let (header, counter) = peek(datagram) else { return .failure(.malformed) }
        guard window.wouldAccept(counter) else { return .failure(.replayed) }
        let count = datagram.count - overhead, end = headerSize + count
        var authentic = false
        let inner = datagram.withUnsafeBytes { d in
            [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
                let text = UnsafeMutableRawBufferPointer(out)
                text.copyMemory(from: UnsafeRawBufferPointer(rebasing: d[headerSize..<end]))
                authentic = key.open(nonce: .init(counter: counter), aad: UnsafeRawBufferPointer(rebasing: d[..<headerSize]),
                                     text: text, tag: UnsafeRawBufferPointer(rebasing: d[end...]))
                initialized = authentic ? count : 0
            }
        }
        guard authentic else { return .failure(.forged) }
        window.take(counter)
        return .success(SealedEnvelope(header: header, counter: counter, inner: inner))
    }
}
