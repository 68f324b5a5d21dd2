/// A receiver's robot id (Protocol.md §6.2, §7.6.1): 40 random bits made once per robot and kept
/// in its state directory, so that robots cloned from one image with one host name can still be
/// told apart (and stopped one at a time). Written as 8 characters of lowercase Crockford base32
/// (`0-9a-z` without `i l o u`), most significant 5 bits first: `k3m9x2ab`.
///
/// On the wire it travels as that text (TXT `robot=`, a stop-all target `id:k3m9x2ab`, the text
/// of a stop-all reply) or as the number (a watch report's robot id, high 24 bits zero).
public struct RobotID: Hashable, Sendable, CustomStringConvertible {
    /// The 40 bits; never 0 (0 means "no robot id" in a watch report).
    public let value: UInt64

    public static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
    public static let length = 8
    static let mask: UInt64 = (1 << 40) - 1
    /// The stop-all target that names a robot by its id: `id:` and the 8 characters.
    public static let targetPrefix = "id:"

    /// nil for 0 or for a value wider than 40 bits.
    public init?(value: UInt64) {
        guard value != 0, value & ~Self.mask == 0 else { return nil }
        self.value = value
    }

    /// Parses the 8-character form. Upper case is taken as lower case (people type ids); any
    /// other length or character (including `i l o u`) is nil.
    public init?(_ text: some StringProtocol) {
        let units = Array(text.utf8)
        guard units.count == Self.length else { return nil }
        var v: UInt64 = 0
        for unit in units {
            let lower = unit >= 0x41 && unit <= 0x5A ? unit + 0x20 : unit
            guard let digit = Self.alphabet.firstIndex(of: lower) else { return nil }
            v = v << 5 | UInt64(digit)
        }
        self.init(value: v)
    }

    /// The robot id a stop-all target names (`id:` and exactly 8 characters, lower case), or nil
    /// when the target is not of that form (it is then a display name, or empty).
    public init?(target: some StringProtocol) {
        let units = Array(target.utf8)
        guard units.count == Self.targetPrefix.utf8.count + Self.length,
              units.starts(with: Self.targetPrefix.utf8),
              let id = RobotID(String(decoding: units.dropFirst(Self.targetPrefix.utf8.count), as: UTF8.self)),
              id.text.utf8.elementsEqual(units.dropFirst(Self.targetPrefix.utf8.count)) else { return nil }
        self = id
    }

    /// A fresh id from `generator` (use the system's CSPRNG).
    public static func random(using generator: inout some RandomNumberGenerator) -> RobotID {
        RobotID(checked: UInt64.random(in: 1...mask, using: &generator))
    }

    private init(checked value: UInt64) { self.value = value }

    /// The 8 characters.
    public var text: String {
        var out: [UInt8] = []
        for i in stride(from: Self.length - 1, through: 0, by: -1) {
            out.append(Self.alphabet[Int(value >> UInt64(5 * i) & 0x1F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `id:` and the 8 characters: the stop-all target that only this robot takes.
    public var target: String { Self.targetPrefix + text }

    public var description: String { text }
}
