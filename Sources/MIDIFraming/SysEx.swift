/// Host → board: one command line in one System Exclusive message, as the kit's iOS build reads it.
///
/// ```
///  F0  57 20 30 66 20 36 34 63 38 0A  F7
///  │   └── "W 0f 64c8\n", ASCII ─────┘ └ end of SysEx
///  └ start of SysEx (no manufacturer id: the command letter comes first)
/// ```
/// The LF is always sent: the firmware never completes a one-byte body (`F0 46 F7` reaches it as
/// a single USB packet whose F7 it stores as data), and a line without it works only by accident.
package enum SysEx {
    package static let start: UInt8 = 0xF0
    package static let end: UInt8 = 0xF7

    /// Wraps one command line. Appends the LF if `line` does not end with one. Refuses a byte
    /// ≥ 0x80 in the body: a status byte there makes the kernel abort the SysEx without an end,
    /// and the board would glue the next message onto this command.
    package static func frame(_ line: some Collection<UInt8>) throws(MIDIFramingError) -> [UInt8] {
        var out: [UInt8] = [start]
        out.reserveCapacity(line.count + 3)
        var last: UInt8?
        for (offset, byte) in line.enumerated() {
            guard byte < 0x80 else { throw MIDIFramingError(.statusByteInBody, byte: byte, offset: offset, line: Array(line)) }
            out.append(byte)
            last = byte
        }
        if last != 0x0A { out.append(0x0A) }
        out.append(end)
        return out
    }
}

/// A line that cannot travel in a SysEx body.
package struct MIDIFramingError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Kind: String, Hashable, Sendable {
        case statusByteInBody
    }
    package let kind: Kind
    package let byte: UInt8
    package let offset: Int
    package let line: [UInt8]

    package init(_ kind: Kind, byte: UInt8, offset: Int, line: [UInt8]) {
        self.kind = kind
        self.byte = byte
        self.offset = offset
        self.line = line
    }

    package var description: String {
        let hex = String(byte, radix: 16)
        return "cannot send a byte ≥ 0x80 in a SysEx body: 0x\(hex.count < 2 ? "0" + hex : hex) at offset \(offset) of a \(line.count)-byte line"
    }
}
