extension BoardCommand {
    /// Is `byte` one of the firmware's line terminators (LF, CR, NUL)?
    @inline(__always)
    package static func isTerminator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == 0
    }

    /// Reads a received line exactly as the firmware's `parse_cmd()` does, or nil for what it
    /// answers with `error:undefined cmd or fmt.` (an unknown letter, including an empty line).
    ///
    /// `line` is the receive buffer: the characters of the line including its terminator.
    /// Fixed columns: letter at 0 (either case), address hex at 2–3, data or count at 5…; columns
    /// 1 and 4 are not checked; a column past the end reads as NUL; any non-hex character reads as
    /// 0 (`W 0f 6\n` writes 0x60: the odd digit pairs with the LF). Data bytes stop at the first
    /// pair whose first character is a terminator, or at the end of the line. Writes past the end
    /// of the memory map are the board's business (it drops them), so they are kept here.
    package static func interpret(firmwareLine line: some Collection<UInt8>) -> BoardCommand? {
        let c = Array(line)
        func at(_ i: Int) -> UInt8 { i < c.count ? c[i] : 0 }
        func pair(_ i: Int) -> UInt8 { ByteText.lenientNibble(at(i)) << 4 | ByteText.lenientNibble(at(i + 1)) }
        func data() -> [UInt8] {
            var out: [UInt8] = []
            var i = 5
            while i < c.count {
                if isTerminator(c[i]) { break }
                out.append(pair(i))
                i += 2
            }
            return out
        }
        switch at(0) {
        case UInt8(ascii: "W"), UInt8(ascii: "w"): return .write(address: pair(2), bytes: data())
        case UInt8(ascii: "R"), UInt8(ascii: "r"): return .read(address: pair(2), count: pair(5))
        case UInt8(ascii: "P"), UInt8(ascii: "p"): return .eepromWrite(address: pair(2), bytes: data())
        case UInt8(ascii: "G"), UInt8(ascii: "g"): return .eepromRead(address: pair(2), count: pair(5))
        case UInt8(ascii: "F"), UInt8(ascii: "f"): return .flash
        default: return nil
        }
    }

    /// Parses one of our own lines strictly (``line`` with or without its LF): the exact format
    /// we send, hex in either case. nil for anything else. For tests and tools that check what a
    /// host sent; the simulator uses ``interpret(firmwareLine:)``.
    package init?(strict text: some Collection<UInt8>) {
        var c = Array(text)
        if c.last == UInt8(ascii: "\n") { c.removeLast() }
        guard let letter = c.first else { return nil }
        func hex(_ range: Range<Int>) -> [UInt8]? {
            guard range.count % 2 == 0, range.upperBound <= c.count else { return nil }
            var out: [UInt8] = []
            var i = range.lowerBound
            while i < range.upperBound {
                guard let h = ByteText.strictNibble(c[i]), let l = ByteText.strictNibble(c[i + 1]) else { return nil }
                out.append(h << 4 | l)
                i += 2
            }
            return out
        }
        let upper = letter & ~0x20
        if upper == UInt8(ascii: "F") {
            guard c.count == 1 else { return nil }
            self = .flash
            return
        }
        guard c.count >= 7, c[1] == UInt8(ascii: " "), c[4] == UInt8(ascii: " "),
              let address = hex(2..<4)?.first, let rest = hex(5..<c.count) else { return nil }
        switch upper {
        case UInt8(ascii: "W") where !rest.isEmpty: self = .write(address: address, bytes: rest)
        case UInt8(ascii: "P") where !rest.isEmpty: self = .eepromWrite(address: address, bytes: rest)
        case UInt8(ascii: "R") where rest.count == 1: self = .read(address: address, count: rest[0])
        case UInt8(ascii: "G") where rest.count == 1: self = .eepromRead(address: address, count: rest[0])
        default: return nil
        }
    }
}
