/// Bytes as text for people: error messages, traces, test failures.
package enum ByteText {
    /// Printable ASCII as is; `\r`, `\n`, `\t`, `\0` and `\\` escaped; anything else as `\xNN`.
    /// `"W 0f 64c8\n"` → `W 0f 64c8\n` (with a visible backslash-n).
    package static func escaped(_ bytes: some Sequence<UInt8>) -> String {
        var out = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "\r"): out += "\\r"
            case UInt8(ascii: "\n"): out += "\\n"
            case UInt8(ascii: "\t"): out += "\\t"
            case 0: out += "\\0"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += "\\x" + hexPair(byte)
            }
        }
        return out
    }

    /// Like ``escaped(_:)`` but shortened to `limit` bytes with a note of the total, for errors.
    package static func evidence(_ bytes: [UInt8], limit: Int = 96) -> String {
        if bytes.count <= limit { return "\"" + escaped(bytes) + "\"" }
        return "\"" + escaped(bytes.prefix(limit)) + "…\" (\(bytes.count) bytes)"
    }

    /// Two lowercase hex digits, as the firmware prints them.
    package static func hexPair(_ byte: UInt8) -> String {
        String(decoding: [hexDigit(byte >> 4), hexDigit(byte & 0x0F)], as: UTF8.self)
    }

    /// Lowercase hex without separators: `[0x64, 0xc8]` → `64c8`.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        for byte in bytes {
            out.append(hexDigit(byte >> 4))
            out.append(hexDigit(byte & 0x0F))
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The firmware's `itoh` for one character: `0-9a-fA-F` → its value, anything else → 0.
    @inline(__always)
    static func lenientNibble(_ unit: UInt8) -> UInt8 {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
        default: 0
        }
    }

    /// Strict hex digit, or nil.
    @inline(__always)
    static func strictNibble(_ unit: UInt8) -> UInt8? {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
