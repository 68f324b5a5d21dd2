import ControlPlane
import Crypto
import RemoteWire
import Testing

/// The primitives the core builds on libsodium, held against their RFCs' vectors and against
/// swift-crypto (an independent implementation, linked by the tests and the web server only).
@Suite struct LibsodiumPrimitiveTests {
    /// RFC 5869 appendix A, test cases 1 and 3 (case 3: no salt, no info).
    @Test func hkdfMatchesRFC5869() {
        let ikm = [UInt8](repeating: 0x0b, count: 22)
        #expect(Hex.string(HKDFSHA256.derive(secret: ikm, salt: Array(0x00...0x0c), info: Array(0xf0...0xf9), count: 42))
                == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        #expect(Hex.string(HKDFSHA256.derive(secret: ikm, salt: [], info: [], count: 42))
                == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    /// Lengths that cross a block, and keys, salts and infos of every size up to two SHA-256
    /// blocks, against swift-crypto's HKDF and HMAC.
    @Test func hkdfAndHMACAgreeWithSwiftCrypto() {
        var rng = SystemRandomNumberGenerator()
        func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        for n in [0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 129] {
            let secret = bytes(max(n, 1)), salt = bytes(n), info = bytes(n)
            for count in [1, 32, 33, 64, 65] {
                let theirs = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), salt: salt, info: info, outputByteCount: count)
                #expect(HKDFSHA256.derive(secret: secret, salt: salt, info: info, count: count) == theirs.withUnsafeBytes { Array($0) },
                        "n \(n), count \(count)")
            }
            let message = bytes(n * 3)
            #expect(HMACSHA256.authenticate(message, key: salt) == Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: salt))),
                    "HMAC, key of \(n) bytes")
            #expect(HMACSHA256.authenticate(joining: Array(message.prefix(n)), Array(message.dropFirst(n)), key: salt)
                    == HMACSHA256.authenticate(message, key: salt), "HMAC of parts = HMAC of the whole")
        }
    }

    @Test func macComparisonIsExact() {
        let a = HMACSHA256.authenticate([1, 2, 3], key: [9])
        var b = a
        #expect(HMACSHA256.equal(a, b))
        b[31] ^= 1
        #expect(!HMACSHA256.equal(a, b))
        #expect(!HMACSHA256.equal(a, Array(a.prefix(16))), "a short MAC never matches")
    }

    /// RFC 7914 §12, the second vector (N 1024, r 8, p 16).
    @Test func scryptMatchesRFC7914() {
        let key = Scrypt.derive(password: Array("password".utf8), salt: Array("NaCl".utf8), n: 1024, r: 8, p: 16, count: 64)
        #expect(key.map(Hex.string) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
        #expect(Scrypt.derive(password: [1], salt: [1], n: 1000, r: 8, p: 1, count: 32) == nil, "N must be a power of two")
    }
}
