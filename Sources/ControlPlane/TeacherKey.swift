import SystemIO

/// The teacher key that signs stop-all commands and the receivers' replies (Protocol.md §7.6):
/// one type that reads it from a file (refused when others may read it), takes a generated key
/// as it is, and stretches a passphrase a person typed with scrypt.
///
/// ```
/// ark1-<64 hex digits>      `analog-remote keygen`: the 32 bytes are the MAC key
/// anything else             a passphrase of at least 12 characters:
///                           MAC key = scrypt(passphrase UTF-8, salt "AnalogRemote teacher key v1",
///                                            N = 2^15, r = 8, p = 1, 32 bytes)
/// ```
/// The scrypt cost (about 32 MiB and a tenth of a second, once at start) is what makes a
/// captured signed stop-all useless for testing guesses offline.
package struct TeacherKey: Sendable, Equatable {
    /// The HMAC-SHA256 key of stop-all MACs (never printed or logged).
    package let macKey: [UInt8]

    package static let generatedPrefix = "ark1-"
    package static let minimumPassphrase = 12
    static let salt = Array("AnalogRemote teacher key v1".utf8)
    static let scryptRounds: UInt64 = 1 << 15

    package init(macKey: [UInt8]) { self.macKey = macKey }

    /// A key as typed or read from a file: a generated key, or a passphrase to stretch.
    package init(text: String) throws(TeacherKeyError) {
        macKey = try Self.macKey(text)
    }

    /// The key in `path`, which only its owner may read (as ssh wants of a private key).
    package init(file path: String) throws(TeacherKeyError) {
        let text: String
        do {
            text = try SecretFile.read(path: path)
        } catch {
            throw TeacherKeyError("--teacher-key-file: \(error)")
        }
        do {
            macKey = try Self.macKey(text)
        } catch {
            throw TeacherKeyError("\(path): \(error)")
        }
    }

    static func macKey(_ text: String) throws(TeacherKeyError) -> [UInt8] {
        if text.hasPrefix(Self.generatedPrefix) {
            let hex = Array(text.utf8.dropFirst(Self.generatedPrefix.utf8.count))
            guard hex.count == 64, let bytes = Self.bytes(hex: hex) else {
                throw TeacherKeyError("the teacher key starts with \(Self.generatedPrefix) but is not 64 hex digits after it: copy it whole from `analog-remote keygen`")
            }
            return bytes
        }
        guard text.count >= Self.minimumPassphrase else {
            throw TeacherKeyError("the teacher key is \(text.count) characters: give at least \(Self.minimumPassphrase), or make one with `analog-remote keygen`")
        }
        guard let key = Scrypt.derive(password: Array(text.utf8), salt: Self.salt, n: Self.scryptRounds, r: 8, p: 1, count: 32) else {
            throw TeacherKeyError("the teacher key could not be stretched: scrypt needs 32 MiB of memory; free some and try again")
        }
        return key
    }

    /// A new key from the system's CSPRNG: `ark1-` and 256 bits in hex.
    package static func generate() -> String {
        var rng = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        var text = generatedPrefix
        for _ in 0..<32 {
            let b = UInt8.random(in: 0...255, using: &rng)
            text.append(digits[Int(b >> 4)])
            text.append(digits[Int(b & 15)])
        }
        return text
    }

    static func bytes(hex: [UInt8]) -> [UInt8]? {
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i + 1 < hex.count {
            guard let hi = nibble(hex[i]), let lo = nibble(hex[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}

/// A teacher key refused: one line saying what is wrong and how to fix it (never the key).
package struct TeacherKeyError: Error, CustomStringConvertible, Sendable {
    package let description: String
    package init(_ description: String) { self.description = description }
}
