import ControlPlane
import ControlWire
import Crypto
import Foundation
import RemoteWire
import TestSupport
import Testing

/// The envelope's AEAD (libsodium's IETF ChaCha20 with its one-time MAC, through ``AEADKey``)
/// against RFC 8439's own vectors, swift-crypto's (BoringSSL) output and the vectors of Python's
/// `cryptography`: the same bytes, and nothing opens that should not.
@Suite struct AEADKeyTests {
    static func bytes(_ n: Int, _ rng: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Sealed in place, as the envelope calls it: ciphertext ‖ tag.
    static func seal(_ c: AEADKey, nonce: [UInt8], aad: [UInt8], _ plain: [UInt8]) -> [UInt8] {
        var out = plain + [UInt8](repeating: 0, count: AEADKey.tagSize)
        aad.withUnsafeBytes { a in
            out.withUnsafeMutableBytes { o in
                c.seal(nonce: .init(bytes: nonce), aad: a, text: UnsafeMutableRawBufferPointer(rebasing: o[..<plain.count]),
                       tag: UnsafeMutableRawBufferPointer(rebasing: o[plain.count...]))
            }
        }
        return out
    }

    /// Opened in place; a refused open must leave no plaintext (libsodium zeroes the buffer).
    static func open(_ c: AEADKey, nonce: [UInt8], aad: [UInt8], _ sealed: [UInt8]) -> [UInt8]? {
        guard sealed.count >= AEADKey.tagSize else { return nil }
        let n = sealed.count - AEADKey.tagSize
        var text = Array(sealed[..<n])
        let tag = Array(sealed[n...])
        let ok = aad.withUnsafeBytes { a in
            tag.withUnsafeBytes { t in
                text.withUnsafeMutableBytes { c.open(nonce: .init(bytes: nonce), aad: a, text: $0, tag: t) }
            }
        }
        if !ok { #expect(text.allSatisfy { $0 == 0 }, "a refused open left bytes behind") }
        return ok ? text : nil
    }

    static func hex(_ s: String) -> [UInt8] { Hex.bytes(s.filter { !$0.isWhitespace }) ?? [] }

    /// RFC 8439 §2.8.2: the AEAD's worked example, sealed.
    @Test func sealsRFC8439Section2_8_2() throws {
        let key = AEADKey(Array(0x80...0x9F))
        let nonce = Self.hex("07000000 40414243 44454647")
        let aad = Self.hex("50515253 c0c1c2c3 c4c5c6c7")
        let plain = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let expected = Self.hex("""
            d31a8d34648e60db7b86afbc53ef7ec2 a4aded51296e08fea9e2b5a736ee62d6 3dbea45e8ca9671282fafb69da92728b
            1a71de0a9e060b2905d6a5b67ecd3b36 92ddbd7f2d778b8c9803aee328091b58 fab324e4fad675945585808b4831d7bc
            3ff4def08e4b7a9de576d26586cec64b 6116
            """)
        let tag = Self.hex("1ae10b594f09e26a7e902ecbd0600691")
        #expect(plain.count == 114 && expected.count == 114)
        let sealed = Self.seal(key, nonce: nonce, aad: aad, plain)
        #expect(sealed == expected + tag)
        #expect(Self.open(key, nonce: nonce, aad: aad, sealed) == plain)
    }

    /// RFC 8439 Appendix A.5: the decryption example (265 bytes, a 12-byte AAD).
    @Test func opensRFC8439AppendixA5() throws {
        let key = AEADKey(Self.hex("1c9240a5eb55d38af333888604f6b5f0 473917c1402b80099dca5cbc207075c0"))
        let nonce = Self.hex("000000000102030405060708")
        let aad = Self.hex("f33388860000000000004e91")
        let ciphertext = Self.hex("""
            64a0861575861af460f062c79be643bd 5e805cfd345cf389f108670ac76c8cb2 4c6cfc18755d43eea09ee94e382d26b0
            bdb7b73c321b0100d4f03b7f355894cf 332f830e710b97ce98c8a84abd0b9481 14ad176e008d33bd60f982b1ff37c855
            9797a06ef4f0ef61c186324e2b350638 3606907b6a7c02b0f9f6157b53c867e4 b9166c767b804d46a59b5216cde7a4e9
            9040c5a40433225ee282a1b0a06c523e af4534d7f83fa1155b0047718cbc546a 0d072b04b3564eea1b422273f548271a
            0bb2316053fa76991955ebd63159434e cebb4e466dae5a1073a6727627097a10 49e617d91d361094fa68f0ff77987130
            305beaba2eda04df997b714d6c6f2c29 a6ad5cb4022b02709b
            """)
        let tag = Self.hex("eead9d67890cbb22392336fea1851f38")
        let plain = Array(("Internet-Drafts are draft documents valid for a maximum of six months and may be updated, "
            + "replaced, or obsoleted by other documents at any time. It is inappropriate to use Internet-Drafts "
            + "as reference material or to cite them other than as /\u{201C}work in progress./\u{201D}").utf8)
        #expect(ciphertext.count == 265 && plain.count == 265)
        #expect(Self.open(key, nonce: nonce, aad: aad, ciphertext + tag) == plain)
        #expect(Self.seal(key, nonce: nonce, aad: aad, plain) == ciphertext + tag)
        var wrongTag = tag
        wrongTag[15] ^= 1
        #expect(Self.open(key, nonce: nonce, aad: aad, ciphertext + wrongTag) == nil)
    }

    @Test func sealsTheSameBytesAsSwiftCryptoForEveryLength() throws {
        var rng = SystemRandomNumberGenerator()
        // Every length around the 16-byte MAC block and the 64-byte ChaCha20 block, the
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
                let c = AEADKey(key)
                let ours = Self.seal(c, nonce: nonce, aad: aad, plain)
                #expect(ours == theirs, "length \(n), aad \(aadCount), key \(Hex.string(key)), nonce \(Hex.string(nonce))")
                #expect(Self.open(c, nonce: nonce, aad: aad, theirs) == plain)
            }
        }
    }

    @Test func opensNothingThatWasChanged() {
        var rng = SystemRandomNumberGenerator()
        let key = Self.bytes(32, &rng), nonce = Self.bytes(12, &rng), aad = Self.bytes(36, &rng), plain = Self.bytes(8, &rng)
        let c = AEADKey(key)
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
        #expect(Self.open(AEADKey(k), nonce: nonce, aad: aad, sealed) == nil)
        #expect(Self.open(c, nonce: nonce, aad: aad, Array(sealed.dropLast())) == nil, "truncated tag")
    }

    @Test func theEnvelopeNonceIsFourZeroBytesAndTheCounterBigEndian() {
        let c = AEADKey(Array(0..<32))
        let counter: UInt64 = 0x0102_0304_0506_0708
        let spelled: [UInt8] = [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
        #expect(AEADKey.Nonce(counter: counter) == AEADKey.Nonce(bytes: spelled))
        #expect(Self.seal(c, nonce: spelled, aad: [9], [1, 2, 3]) == {
            var out: [UInt8] = [1, 2, 3] + [UInt8](repeating: 0, count: 16)
            [UInt8]([9]).withUnsafeBytes { a in
                out.withUnsafeMutableBytes { o in
                    c.seal(nonce: .init(counter: counter), aad: a, text: UnsafeMutableRawBufferPointer(rebasing: o[..<3]),
                           tag: UnsafeMutableRawBufferPointer(rebasing: o[3...]))
                }
            }
            return out
        }())
    }

    /// The keys of one connection are read into the AEAD once (``SessionKeys``) and reused for
    /// every datagram: each envelope still equals swift-crypto's for its own counter, the vectors'
    /// too, and the counters (the nonces) never repeat.
    @Test func aReusedKeySealsEveryCounterAsSwiftCryptoAndTheVectorsDo() throws {
        let v = try SecurityVectors.load()
        let secret = RobotSecret(bytes: try #require(Hex.bytes(v.secret.bytes)))
        let nr = try #require(Hex.bytes(v.handshake.receiverNonce)), nc = try #require(Hex.bytes(v.handshake.controllerNonce))
        let id = try #require(UInt64(v.handshake.connectionId, radix: 16))
        let keys = SecretHandshake.keys(secret: secret, receiverNonce: nr, controllerNonce: nc, connectionID: id)
        let cipher = keys.controllerToReceiver
        // The same key as swift-crypto holds it: HKDF as SecretHandshake.keys spells it, first half.
        let both = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret.bytes), salt: nr + nc,
                                          info: Array("AnalogRemote v1 keys".utf8) + withUnsafeBytes(of: id.bigEndian, Array.init),
                                          outputByteCount: 64)
        let controllerToReceiver = SymmetricKey(data: both.withUnsafeBytes { Array($0[0..<32]) })
        for e in v.envelopes where e.direction == "c2s" {
            let wire = try #require(Hex.bytes(e.hex))
            let inner = try #require(Hex.bytes(e.inner))
            let instance = try ControlDatagram.decode(Array(wire[..<ControlHeader.extendedSize])).header.connection
            // Between the vectors, the same cipher value seals 100 other datagrams.
            for c in 100..<200 as Range<UInt64> {
                _ = SealedEnvelope.seal(inner, connectionID: id, instance: instance, counter: c, key: cipher)
            }
            #expect(SealedEnvelope.seal(inner, connectionID: id, instance: instance, counter: e.counter, key: cipher) == wire)
        }
        var window = ReplayWindow()
        for counter in 1...300 as ClosedRange<UInt64> {
            let inner = StatePacket.encode(ControllerState(angle: Float(counter) / 1000, buttons: .forward))
            let ours = SealedEnvelope.seal(inner, connectionID: id, instance: 0xC0C0_C0C0, counter: counter, key: cipher)
            let prefix = Array(ours[..<SealedEnvelope.headerSize])
            #expect(prefix == ControlHeader(type: .sealed, connection: 0xC0C0_C0C0, connectionID: id).bytes
                    + withUnsafeBytes(of: counter.bigEndian, Array.init))
            let nonce = [0, 0, 0, 0] + withUnsafeBytes(of: counter.bigEndian, Array.init)
            let box = try ChaChaPoly.seal(inner, using: controllerToReceiver, nonce: ChaChaPoly.Nonce(data: nonce),
                                          authenticating: prefix)
            #expect(Array(ours[SealedEnvelope.headerSize...]) == Array(box.ciphertext) + Array(box.tag), "counter \(counter)")
            #expect(try SealedEnvelope.open(ours, key: cipher, window: &window).get().inner == inner)
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
