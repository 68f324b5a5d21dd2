/// ChaCha20-Poly1305 (RFC 8439 §2.8) for the authenticated envelope, over caller-owned buffers:
/// no allocation, no context to set up per datagram — the key's eight words are read once, when
/// the connection's keys are derived.
///
/// Why not swift-crypto's `ChaChaPoly` (which the handshake's HKDF and HMAC still use): on Linux
/// each call builds and frees a BoringSSL AEAD context and moves the bytes through four to six
/// `Data` values; for an 8-byte state that was most of the 4.35 µs a seal plus an open cost
/// (BENCHMARKS.md). The bytes are the same: `Tests/ControlPlaneTests` checks this
/// against swift-crypto on random keys, nonces and lengths, and against `vectors/security.json`.
///
/// Contracts and traps:
/// - Constant time by construction: 32-bit adds, xors and rotations, 64-bit multiplies, no branch
///   or table index that depends on the key, the data or the tag (the final reduction of Poly1305
///   and the tag comparison select with masks).
/// - ``open(nonce:aad:ciphertext:tag:into:)`` authenticates before it decrypts and writes nothing
///   when the tag does not verify.
/// - A (key, nonce) pair must never seal two different messages; the envelope's nonce is its
///   counter, which the sender never repeats (``SealedEnvelope``).
package struct ChaCha20Poly1305: Sendable, Hashable {
    package static let keySize = 32
    package static let tagSize = 16
    /// The key as ChaCha20 reads it: eight little-endian words.
    let k0, k1, k2, k3, k4, k5, k6, k7: UInt32

    /// `key` must be 32 bytes.
    package init(key: UnsafeRawBufferPointer) {
        precondition(key.count == Self.keySize, "ChaCha20-Poly1305 takes a 32-byte key")
        func word(_ i: Int) -> UInt32 { UInt32(littleEndian: key.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
        (k0, k1, k2, k3, k4, k5, k6, k7) = (word(0), word(1), word(2), word(3), word(4), word(5), word(6), word(7))
    }

    /// `key` must be 32 bytes.
    package init(key: [UInt8]) {
        self = key.withUnsafeBytes { ChaCha20Poly1305(key: $0) }
    }

    /// The 96-bit nonce as three little-endian words.
    package struct Nonce: Sendable, Hashable {
        let n0, n1, n2: UInt32

        /// 12 bytes.
        package init(bytes: some Collection<UInt8>) {
            precondition(bytes.count == 12, "a ChaCha20-Poly1305 nonce is 12 bytes")
            var w: (UInt32, UInt32, UInt32) = (0, 0, 0)
            for (i, b) in bytes.enumerated() {
                let v = UInt32(b) << (8 * UInt32(i % 4))
                switch i / 4 { case 0: w.0 |= v; case 1: w.1 |= v; default: w.2 |= v }
            }
            (n0, n1, n2) = w
        }

        /// 4 zero bytes ‖ `counter` (UInt64 big-endian): the envelope's nonce (Protocol.md §8.3).
        package init(counter: UInt64) {
            n0 = 0
            n1 = UInt32(truncatingIfNeeded: counter >> 32).byteSwapped
            n2 = UInt32(truncatingIfNeeded: counter).byteSwapped
        }
    }

    /// Encrypts `plaintext` into `ciphertext` (same count; they may be the same memory) and writes
    /// the 16-byte tag over `aad` and the ciphertext into `tag`.
    package func seal(nonce: Nonce, aad: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
                     ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer) {
        precondition(ciphertext.count == plaintext.count && tag.count == Self.tagSize)
        xor(nonce: nonce, from: plaintext, into: ciphertext)
        var mac = Poly1305(oneTimeKey: block(counter: 0, nonce: nonce))
        mac.update(padded: aad)
        mac.update(padded: UnsafeRawBufferPointer(ciphertext))
        mac.lengths(aad: aad.count, text: ciphertext.count)
        mac.finish(into: tag)
    }

    /// Checks `tag` over `aad` and `ciphertext`; only if it verifies, decrypts into `plaintext`
    /// (same count; may be the same memory) and returns true.
    package func open(nonce: Nonce, aad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
                     tag: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(ciphertext.count == plaintext.count)
        guard tag.count == Self.tagSize else { return false }
        var mac = Poly1305(oneTimeKey: block(counter: 0, nonce: nonce))
        mac.update(padded: aad)
        mac.update(padded: ciphertext)
        mac.lengths(aad: aad.count, text: ciphertext.count)
        var expected: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &expected) { mac.finish(into: $0) }
        var difference: UInt8 = 0
        withUnsafeBytes(of: expected) { e in
            for i in 0..<Self.tagSize { difference |= e[i] ^ tag[i] }
        }
        guard difference == 0 else { return false }
        xor(nonce: nonce, from: ciphertext, into: plaintext)
        return true
    }

    /// `output = input ⊕ keystream`, the keystream starting at block counter 1.
    private func xor(nonce: Nonce, from input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        var offset = 0
        var counter: UInt32 = 1
        while offset < input.count {
            let stream = block(counter: counter, nonce: nonce)
            let n = min(64, input.count - offset)
            withUnsafeBytes(of: stream) { s in
                for i in 0..<n { output[offset + i] = input[offset + i] ^ s[i] }
            }
            offset += n
            counter &+= 1
        }
    }

    typealias Block = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                       UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

    /// One ChaCha20 block (RFC 8439 §2.3), as sixteen words; their little-endian bytes are the keystream.
    @inline(__always)
    func block(counter: UInt32, nonce: Nonce) -> Block {
        let c0: UInt32 = 0x6170_7865, c1: UInt32 = 0x3320_646e, c2: UInt32 = 0x7962_2d32, c3: UInt32 = 0x6b20_6574
        var x0 = c0, x1 = c1, x2 = c2, x3 = c3
        var x4 = k0, x5 = k1, x6 = k2, x7 = k3, x8 = k4, x9 = k5, x10 = k6, x11 = k7
        var x12 = counter, x13 = nonce.n0, x14 = nonce.n1, x15 = nonce.n2
        @inline(__always) func quarter(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
            a &+= b; d ^= a; d = d << 16 | d >> 16
            c &+= d; b ^= c; b = b << 12 | b >> 20
            a &+= b; d ^= a; d = d << 8 | d >> 24
            c &+= d; b ^= c; b = b << 7 | b >> 25
        }
        for _ in 0..<10 {
            quarter(&x0, &x4, &x8, &x12); quarter(&x1, &x5, &x9, &x13)
            quarter(&x2, &x6, &x10, &x14); quarter(&x3, &x7, &x11, &x15)
            quarter(&x0, &x5, &x10, &x15); quarter(&x1, &x6, &x11, &x12)
            quarter(&x2, &x7, &x8, &x13); quarter(&x3, &x4, &x9, &x14)
        }
        return ((x0 &+ c0).littleEndian, (x1 &+ c1).littleEndian, (x2 &+ c2).littleEndian, (x3 &+ c3).littleEndian,
                (x4 &+ k0).littleEndian, (x5 &+ k1).littleEndian, (x6 &+ k2).littleEndian, (x7 &+ k3).littleEndian,
                (x8 &+ k4).littleEndian, (x9 &+ k5).littleEndian, (x10 &+ k6).littleEndian, (x11 &+ k7).littleEndian,
                (x12 &+ counter).littleEndian, (x13 &+ nonce.n0).littleEndian,
                (x14 &+ nonce.n1).littleEndian, (x15 &+ nonce.n2).littleEndian)
    }
}

/// Poly1305 (RFC 8439 §2.5) in five 26-bit limbs, over whole 16-byte blocks only: the AEAD pads
/// everything it authenticates to 16 bytes, so the partial-block case never arises.
struct Poly1305 {
    private let r0, r1, r2, r3, r4: UInt64
    private let s1, s2, s3, s4: UInt64
    private let pad0, pad1, pad2, pad3: UInt32
    private var h0: UInt64 = 0, h1: UInt64 = 0, h2: UInt64 = 0, h3: UInt64 = 0, h4: UInt64 = 0

    /// The first 32 bytes of `block` (ChaCha20 at counter 0) are r ‖ s.
    init(oneTimeKey block: ChaCha20Poly1305.Block) {
        // r, clamped (RFC 8439 §2.5.1), split into 26-bit limbs.
        let t0 = UInt64(UInt32(littleEndian: block.0)), t1 = UInt64(UInt32(littleEndian: block.1))
        let t2 = UInt64(UInt32(littleEndian: block.2)), t3 = UInt64(UInt32(littleEndian: block.3))
        r0 = t0 & 0x3ff_ffff
        r1 = ((t0 >> 26) | (t1 << 6)) & 0x3ff_ff03
        r2 = ((t1 >> 20) | (t2 << 12)) & 0x3ff_c0ff
        r3 = ((t2 >> 14) | (t3 << 18)) & 0x3f0_3fff
        r4 = (t3 >> 8) & 0x00f_ffff
        s1 = r1 * 5; s2 = r2 * 5; s3 = r3 * 5; s4 = r4 * 5
        (pad0, pad1, pad2, pad3) = (UInt32(littleEndian: block.4), UInt32(littleEndian: block.5),
                                    UInt32(littleEndian: block.6), UInt32(littleEndian: block.7))
    }

    /// Absorbs one 16-byte block given as four little-endian words.
    @inline(__always)
    private mutating func absorb(_ m0: UInt32, _ m1: UInt32, _ m2: UInt32, _ m3: UInt32) {
        let t0 = UInt64(m0), t1 = UInt64(m1), t2 = UInt64(m2), t3 = UInt64(m3)
        h0 &+= t0 & 0x3ff_ffff
        h1 &+= ((t0 >> 26) | (t1 << 6)) & 0x3ff_ffff
        h2 &+= ((t1 >> 20) | (t2 << 12)) & 0x3ff_ffff
        h3 &+= ((t2 >> 14) | (t3 << 18)) & 0x3ff_ffff
        h4 &+= (t3 >> 8) | (1 << 24)
        let d0 = h0 &* r0 &+ h1 &* s4 &+ h2 &* s3 &+ h3 &* s2 &+ h4 &* s1
        var d1 = h0 &* r1 &+ h1 &* r0 &+ h2 &* s4 &+ h3 &* s3 &+ h4 &* s2
        var d2 = h0 &* r2 &+ h1 &* r1 &+ h2 &* r0 &+ h3 &* s4 &+ h4 &* s3
        var d3 = h0 &* r3 &+ h1 &* r2 &+ h2 &* r1 &+ h3 &* r0 &+ h4 &* s4
        var d4 = h0 &* r4 &+ h1 &* r3 &+ h2 &* r2 &+ h3 &* r1 &+ h4 &* r0
        h0 = d0 & 0x3ff_ffff; d1 &+= d0 >> 26
        h1 = d1 & 0x3ff_ffff; d2 &+= d1 >> 26
        h2 = d2 & 0x3ff_ffff; d3 &+= d2 >> 26
        h3 = d3 & 0x3ff_ffff; d4 &+= d3 >> 26
        h4 = d4 & 0x3ff_ffff
        h0 &+= (d4 >> 26) &* 5
        h1 &+= h0 >> 26; h0 &= 0x3ff_ffff
    }

    /// Absorbs `bytes`, the last block zero-padded to 16 bytes.
    mutating func update(padded bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset + 16 <= bytes.count {
            absorb(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian,
                   bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self).littleEndian,
                   bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self).littleEndian,
                   bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self).littleEndian)
            offset += 16
        }
        guard offset < bytes.count else { return }
        var last: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &last) { l in
            for i in offset..<bytes.count { l[i - offset] = bytes[i] }
        }
        absorb(last.0.littleEndian, last.1.littleEndian, last.2.littleEndian, last.3.littleEndian)
    }

    /// The closing block: both lengths as UInt64 little-endian.
    mutating func lengths(aad: Int, text: Int) {
        let a = UInt64(aad), t = UInt64(text)
        absorb(UInt32(truncatingIfNeeded: a), UInt32(truncatingIfNeeded: a >> 32),
               UInt32(truncatingIfNeeded: t), UInt32(truncatingIfNeeded: t >> 32))
    }

    /// (h mod 2^130 − 5) + s mod 2^128, little-endian, into 16 bytes.
    func finish(into tag: UnsafeMutableRawBufferPointer) {
        let mask: UInt64 = 0x3ff_ffff
        var h0 = self.h0, h1 = self.h1, h2 = self.h2, h3 = self.h3, h4 = self.h4
        var c = h1 >> 26; h1 &= mask
        h2 += c; c = h2 >> 26; h2 &= mask
        h3 += c; c = h3 >> 26; h3 &= mask
        h4 += c; c = h4 >> 26; h4 &= mask
        h0 += c * 5; c = h0 >> 26; h0 &= mask
        h1 += c
        // g = h + 5 − 2^130; keep g when it is not negative (h ≥ p), selected by mask, not by a branch.
        var g0 = h0 &+ 5; c = g0 >> 26; g0 &= mask
        var g1 = h1 &+ c; c = g1 >> 26; g1 &= mask
        var g2 = h2 &+ c; c = g2 >> 26; g2 &= mask
        var g3 = h3 &+ c; c = g3 >> 26; g3 &= mask
        var g4 = h4 &+ c &- (1 << 26)
        let keepG = (g4 >> 63) &- 1          // all ones when g4 ≥ 0
        g0 &= keepG; g1 &= keepG; g2 &= keepG; g3 &= keepG; g4 &= keepG
        let keepH = ~keepG
        h0 = (h0 & keepH) | g0; h1 = (h1 & keepH) | g1; h2 = (h2 & keepH) | g2
        h3 = (h3 & keepH) | g3; h4 = (h4 & keepH) | g4
        // Back to four 32-bit words, then + s.
        let w0 = (h0 | h1 << 26) & 0xffff_ffff
        let w1 = (h1 >> 6 | h2 << 20) & 0xffff_ffff
        let w2 = (h2 >> 12 | h3 << 14) & 0xffff_ffff
        let w3 = (h3 >> 18 | h4 << 8) & 0xffff_ffff
        var f = w0 + UInt64(pad0); let o0 = UInt32(truncatingIfNeeded: f)
        f = w1 + UInt64(pad1) + (f >> 32); let o1 = UInt32(truncatingIfNeeded: f)
        f = w2 + UInt64(pad2) + (f >> 32); let o2 = UInt32(truncatingIfNeeded: f)
        f = w3 + UInt64(pad3) + (f >> 32); let o3 = UInt32(truncatingIfNeeded: f)
        tag.storeBytes(of: o0.littleEndian, toByteOffset: 0, as: UInt32.self)
        tag.storeBytes(of: o1.littleEndian, toByteOffset: 4, as: UInt32.self)
        tag.storeBytes(of: o2.littleEndian, toByteOffset: 8, as: UInt32.self)
        tag.storeBytes(of: o3.littleEndian, toByteOffset: 12, as: UInt32.self)
    }
}
