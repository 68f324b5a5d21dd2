import ControlPlane
import ControlWire
import Crypto
import Foundation
import RemoteWire
import TestSupport
import Testing

/// The envelope's own ChaCha20-Poly1305 (issue 30) against swift-crypto's (BoringSSL) and the
/// vectors of Python's `cryptography`: the same bytes, and nothing opens that should not.
@Suite struct ChaCha20Poly1305Tests {
    static func bytes(_ n: Int, _ rng: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Ours sealed through the raw-buffer API, as the envelope calls it.
    static func seal(_ c: ChaCha20Poly1305, nonce: [UInt8], aad: [UInt8], _ plain: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plain.count + 16)
        aad.withUnsafeBytes { a in
            plain.withUnsafeBytes { p in
                out.withUnsafeMutableBytes { o in
                    c.seal(nonce: .init(bytes: nonce), aad: a, plaintext: p,
                           ciphertext: UnsafeMutableRawBufferPointer(rebasing: o[..<plain.count]),
                           tag: UnsafeMutableRawBufferPointer(rebasing: o[plain.count...]))
                }
            }
        }
        return out
    }

    static func open(_ c: ChaCha20Poly1305, nonce: [UInt8], aad: [UInt8], _ sealed: [UInt8]) -> [UInt8]? {
        let n = sealed.count - 16
        var plain = [UInt8](repeating: 0xEE, count: n)
        let ok = aad.withUnsafeBytes { a in
            sealed.withUnsafeBytes { s in
                plain.withUnsafeMutableBytes { p in
                    c.open(nonce: .init(bytes: nonce), aad: a, ciphertext: UnsafeRawBufferPointer(rebasing: s[..<n]),
                           tag: UnsafeRawBufferPointer(rebasing: s[n...]), into: p)
                }
            }
        }
        if !ok { #expect(plain.allSatisfy { $0 == 0xEE }, "a refused open wrote plaintext") }
        return ok ? plain : nil
    }

    @Test func sealsTheSameBytesAsSwiftCryptoForEveryLength() throws {
        var rng = SystemRandomNumberGenerator()
        // Every length around the 16-byte Poly1305 block and the 64-byte ChaCha20 block, the
        // envelope's own sizes (36 bytes of header, an 8-byte state, the largest datagram).
        let textLengths = Array(0...80) + [127, 128, 129, 200, SealedEnvelope.maxInner]
        let aadLengths = [0, 1, 15, 16, 17, 36, 100]
        for n in textLengths {
            for aadCount in aadLengths where n % 7 == 0 || aadCount == 36 || n > 64 {
                let key = Self.bytes(32, &rng), nonce = Self.bytes(12, &rng)
                let aad = Self.bytes(aadCount, &rng), plain = Self.bytes(n, &rng)
                let box = try ChaChaPoly.seal(plain, using: SymmetricKey(data: key), nonce: ChaChaPoly.Nonce(data: nonce),
                                              authenticating: aad)
                let theirs = Array(box.ciphertext) + Array(box.tag)
                let c = ChaCha20Poly1305(key: key)
                let ours = Self.seal(c, nonce: nonce, aad: aad, plain)
                #expect(ours == theirs, "length \(n), aad \(aadCount), key \(Hex.string(key)), nonce \(Hex.string(nonce))")
                #expect(Self.open(c, nonce: nonce, aad: aad, theirs) == plain)
            }
        }
    }

    @Test func opensNothingThatWasChanged() {
        var rng = SystemRandomNumberGenerator()
        let key = Self.bytes(32, &rng), nonce = Self.bytes(12, &rng), aad = Self.bytes(36, &rng), plain = Self.bytes(8, &rng)
        let c = ChaCha20Poly1305(key: key)
        let sealed = Self.seal(c, nonce: nonce, aad: aad, plain)
        #expect(Self.open(c, nonce: nonce, aad: aad, sealed) == plain)
        // Every single-bit change of ciphertext, tag, additional data, nonce or key is refused.
        for i in 0..<(sealed.count * 8) {
            var s = sealed
            s[i / 8] ^= 1 << (i % 8)
            #expect(Self.open(c, nonce: nonce, aad: aad, s) == nil, "ciphertext/tag bit \(i)")
        }
        for i in 0..<(aad.count * 8) {
            var a = aad
            a[i / 8] ^= 1 << (i % 8)
            #expect(Self.open(c, nonce: nonce, aad: a, sealed) == nil, "aad bit \(i)")
        }
        for i in 0..<(nonce.count * 8) {
            var n = nonce
            n[i / 8] ^= 1 << (i % 8)
            #expect(Self.open(c, nonce: n, aad: aad, sealed) == nil, "nonce bit \(i)")
        }
        var k = key
        k[31] ^= 0x80
        #expect(Self.open(ChaCha20Poly1305(key: k), nonce: nonce, aad: aad, sealed) == nil)
        #expect(Self.open(c, nonce: nonce, aad: aad, Array(sealed.dropLast())) == nil, "truncated tag")
    }

    @Test func theEnvelopeNonceIsFourZeroBytesAndTheCounterBigEndian() {
        let c = ChaCha20Poly1305(key: Array(0..<32))
        let counter: UInt64 = 0x0102_0304_0506_0708
        let spelled: [UInt8] = [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
        #expect(ChaCha20Poly1305.Nonce(counter: counter) == ChaCha20Poly1305.Nonce(bytes: spelled))
        #expect(Self.seal(c, nonce: spelled, aad: [9], [1, 2, 3]) == {
            var out = [UInt8](repeating: 0, count: 19)
            [UInt8]([9]).withUnsafeBytes { a in
                [UInt8]([1, 2, 3]).withUnsafeBytes { p in
                    out.withUnsafeMutableBytes { o in
                        c.seal(nonce: .init(counter: counter), aad: a, plaintext: p,
                               ciphertext: UnsafeMutableRawBufferPointer(rebasing: o[..<3]),
                               tag: UnsafeMutableRawBufferPointer(rebasing: o[3...]))
                    }
                }
            }
            return out
        }())
    }

    /// The keys of one connection are read into the cipher once (``SessionKeys``) and reused for
    /// every datagram: each envelope still equals swift-crypto's for its own counter, the vectors'
    /// too, and the counters (the nonces) never repeat.
    @Test func aReusedKeySealsEveryCounterAsSwiftCryptoAndTheVectorsDo() throws {
        let v = try SecurityVectors.load()
        let secret = RobotSecret(bytes: try #require(Hex.bytes(v.secret.bytes)))
        let nr = try #require(Hex.bytes(v.handshake.receiverNonce)), nc = try #require(Hex.bytes(v.handshake.controllerNonce))
        let id = try #require(UInt64(v.handshake.connectionId, radix: 16))
        let keys = SecretHandshake.keys(secret: secret, receiverNonce: nr, controllerNonce: nc, connectionID: id)
        let cipher = keys.controllerToReceiverCipher
        for e in v.envelopes where e.direction == "c2s" {
            let wire = try #require(Hex.bytes(e.hex))
            let inner = try #require(Hex.bytes(e.inner))
            let instance = try ControlDatagram.decode(Array(wire[..<ControlHeader.extendedSize])).header.connection
            // Between the vectors, the same cipher value seals 100 other datagrams.
            for c in 100..<200 as Range<UInt64> {
                _ = SealedEnvelope.seal(inner, connectionID: id, instance: instance, counter: c, cipher: cipher)
            }
            #expect(SealedEnvelope.seal(inner, connectionID: id, instance: instance, counter: e.counter, cipher: cipher) == wire)
        }
        var window = ReplayWindow()
        for counter in 1...300 as ClosedRange<UInt64> {
            let inner = StatePacket.encode(ControllerState(angle: Float(counter) / 1000, buttons: .forward))
            let ours = SealedEnvelope.seal(inner, connectionID: id, instance: 0xC0C0_C0C0, counter: counter, cipher: cipher)
            let prefix = Array(ours[..<SealedEnvelope.headerSize])
            #expect(prefix == ControlHeader(type: .sealed, connection: 0xC0C0_C0C0, connectionID: id).bytes
                    + withUnsafeBytes(of: counter.bigEndian, Array.init))
            let nonce = [0, 0, 0, 0] + withUnsafeBytes(of: counter.bigEndian, Array.init)
            let box = try ChaChaPoly.seal(inner, using: keys.controllerToReceiver, nonce: ChaChaPoly.Nonce(data: nonce),
                                          authenticating: prefix)
            #expect(Array(ours[SealedEnvelope.headerSize...]) == Array(box.ciphertext) + Array(box.tag), "counter \(counter)")
            #expect(try SealedEnvelope.open(ours, cipher: cipher, window: &window).get().inner == inner)
        }
    }

    /// The controller takes a new counter for every envelope it seals: the nonce under one key
    /// never repeats, whatever mix of states and control datagrams goes out.
    @Test func theControllerNeverSealsTwoEnvelopesWithOneCounter() throws {
        var rig = SecretRig()
        rig.handshake()
        #expect(rig.session.established)
        var counters: [UInt64] = []
        let packet = StatePacket.encode(ControllerState(angle: 0.1, buttons: .forward))
        for i in 0..<500 {
            let datagram = i % 5 == 0 ? [0x41, 0x52] + [UInt8](repeating: 1, count: 30) : packet
            let sealing = rig.session.seal(datagram)
            let sealed = try #require(sealing)
            counters.append(try #require(SealedEnvelope.peek(sealed)).counter)
        }
        #expect(Set(counters).count == counters.count)
        #expect(counters == counters.sorted())
    }
}
