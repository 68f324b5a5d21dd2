/// One command line of the board's text protocol.
///
/// ```
///  W aa dddd…\n   write memory map bytes from address aa (hex pairs run together)
///  R aa nn\n      read nn bytes of the memory map from aa
///  P aa dddd…\n   write EEPROM bytes from aa
///  G aa nn\n      read nn bytes of EEPROM from aa
///  F\n            store the memory map as EEPROM's initial image
///  0123456        ← the firmware reads fixed columns: letter at 0, address at 2–3, data from 5
/// ```
///
/// ``line`` is what we send: uppercase letter, lowercase hex, single spaces, LF only. Never CRLF:
/// the firmware ends a line at CR, LF or NUL, so CRLF is two lines and the empty second line draws
/// `error:undefined cmd or fmt.`.
package enum BoardCommand: Hashable, Sendable {
    case write(address: UInt8, bytes: [UInt8])
    case read(address: UInt8, count: UInt8)
    case eepromWrite(address: UInt8, bytes: [UInt8])
    case eepromRead(address: UInt8, count: UInt8)
    case flash

    /// The most data bytes one `W`/`P` line can carry: the firmware keeps 255 characters plus
    /// the terminator, and `W aa ` takes 5 of them.
    package static let maximumDataBytes = 125

    /// The line to send, LF-terminated.
    package var line: [UInt8] {
        var out: [UInt8]
        switch self {
        case let .write(address, bytes): out = Self.head("W", address) + [UInt8(ascii: " ")] + Self.hexBytes(bytes)
        case let .read(address, count): out = Self.head("R", address) + [UInt8(ascii: " ")] + Self.hexBytes([count])
        case let .eepromWrite(address, bytes): out = Self.head("P", address) + [UInt8(ascii: " ")] + Self.hexBytes(bytes)
        case let .eepromRead(address, count): out = Self.head("G", address) + [UInt8(ascii: " ")] + Self.hexBytes([count])
        case .flash: out = [UInt8(ascii: "F")]
        }
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// The line without its LF, for logs and messages: `W 0f 64c8`.
    package var text: String { String(decoding: line.dropLast(), as: UTF8.self) }

    /// True when ``line`` fits the firmware's 255-character line (a longer line is discarded by
    /// the board without a reply other than the prompt).
    package var fitsOneLine: Bool { line.count <= 256 }

    private static func head(_ letter: Unicode.Scalar, _ address: UInt8) -> [UInt8] {
        [UInt8(letter.value), UInt8(ascii: " "), ByteText.hexDigit(address >> 4), ByteText.hexDigit(address & 0x0F)]
    }

    private static func hexBytes(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(ByteText.hexDigit(b >> 4))
            out.append(ByteText.hexDigit(b & 0x0F))
        }
        return out
    }
}

extension BoardCommand: CustomStringConvertible {
    package var description: String { text }
}
