/// The button bitfield of the state packet (bytes 4–7, UInt32 big-endian on the wire).
///
/// Bits 0–3 are the original controller's, in its order: forward, backward, A, B. Bits 4–14 name
/// gamepad buttons. Bits 15–31 are reserved: a decoder clears them (see ``StatePacket``), so a
/// newer sender with more buttons still drives an older receiver without surprises.
public struct Buttons: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Drive forward (the original controller's up key; d-pad up on a gamepad).
    public static let forward = Buttons(rawValue: 1 << 0)
    /// Drive backward (d-pad down).
    public static let backward = Buttons(rawValue: 1 << 1)
    /// Button A: the kit's default mapping lights LED1 (the stock firmware's sounds the horn).
    public static let a = Buttons(rawValue: 1 << 2)
    /// Button B: the kit's default mapping lights LED2.
    public static let b = Buttons(rawValue: 1 << 3)
    /// Gamepad button X. No default mapping drives anything with X…``right``: they reach the
    /// receiver's mapping file and an embedded receiver (AnalogRemoteKit's `RobotReceiver`) as bits to use.
    public static let x = Buttons(rawValue: 1 << 4)
    /// Gamepad button Y.
    public static let y = Buttons(rawValue: 1 << 5)
    /// Left shoulder.
    public static let l = Buttons(rawValue: 1 << 6)
    /// Right shoulder.
    public static let r = Buttons(rawValue: 1 << 7)
    /// Start (menu).
    public static let start = Buttons(rawValue: 1 << 8)
    /// Select (back, view).
    public static let select = Buttons(rawValue: 1 << 9)
    /// The guide / home button.
    public static let home = Buttons(rawValue: 1 << 10)
    /// Left stick pressed in (L3).
    public static let l3 = Buttons(rawValue: 1 << 11)
    /// Right stick pressed in (R3).
    public static let r3 = Buttons(rawValue: 1 << 12)
    /// D-pad left (d-pad up and down are ``forward`` and ``backward``).
    public static let left = Buttons(rawValue: 1 << 13)
    /// D-pad right.
    public static let right = Buttons(rawValue: 1 << 14)

    /// Every bit that has a name; the rest are reserved.
    public static let defined = Buttons(rawValue: 0x0000_7FFF)
    /// The bits a receiver reads as drive input: a state is "neutral for driving" without them.
    public static let drive: Buttons = [.forward, .backward]

    /// Names in bit order, as used on command lines and in stdin lines (`forward+a`).
    public static let names: [(name: String, button: Buttons)] = [
        ("forward", .forward), ("backward", .backward), ("a", .a), ("b", .b),
        ("x", .x), ("y", .y), ("l", .l), ("r", .r), ("start", .start), ("select", .select),
        ("home", .home), ("l3", .l3), ("r3", .r3), ("left", .left), ("right", .right),
    ]
}

extension Buttons: CustomStringConvertible {
    /// `forward+a`, or `none`; reserved bits show as `0x…` at the end.
    public var description: String {
        var parts = Self.names.filter { contains($0.button) }.map(\.name)
        let reserved = rawValue & ~Self.defined.rawValue
        if reserved != 0 { parts.append("0x" + String(reserved, radix: 16)) }
        return parts.isEmpty ? "none" : parts.joined(separator: "+")
    }
}

extension Buttons {
    /// Parses `forward+a` (names, any case, joined by `+`), a decimal number, or `0x` hex.
    /// `none` and `0` are the empty set. Returns nil for anything else (unknown name, overflow).
    public init?(parsing text: Substring) {
        // The usual form, a decimal mask, without `lowercased()`'s new string (same result: a
        // string of digits only parses the same either way).
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard let value = UInt32(text) else { return nil }
            self.init(rawValue: value)
            return
        }
        let lowered = text.lowercased()
        if lowered.hasPrefix("0x") {
            guard let value = UInt32(lowered.dropFirst(2), radix: 16) else { return nil }
            self.init(rawValue: value)
            return
        }
        if let value = UInt32(lowered) {
            self.init(rawValue: value)
            return
        }
        if lowered == "none" {
            self = []
            return
        }
        var result: Buttons = []
        for part in lowered.split(separator: "+", omittingEmptySubsequences: false) {
            guard let entry = Self.names.first(where: { $0.name == part }) else { return nil }
            result.insert(entry.button)
        }
        self = result
    }
}
