import RemoteWire

/// The text form of one controller state, as read from stdin (`ANGLE BUTTONS`) and in scripts
/// (`T_MS ANGLE BUTTONS`).
///
/// - ANGLE: radians as a decimal (`0.25`, `-1e-3`), finite, within ±π/2 (±1.5707964).
/// - BUTTONS: optional (absent = none): a decimal or `0x` hex bit mask, `none`, or names joined by
///   `+` in any case (`forward+a`; names in ``Buttons/names``).
/// - Fields are separated by spaces or tabs; `#` starts a comment to the end of the line; a line
///   that is blank after that carries no state.
package enum StateLine {
    /// Why a line is not a state; `description` is the part after `stdin:LINE: `.
    package struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        package let description: String
        init(_ text: String) { description = text }
    }

    /// The fields of a line with its comment removed; empty for a blank or comment-only line.
    ///
    /// Split on the UTF-8 bytes: splitting the `Substring` by `Character` ran the grapheme breaker
    /// over every byte, 7,000 of the 26,000 instructions a stdin line cost the controller (callgrind).
    /// The separators and `#` are ASCII, so a byte split cuts at the same places, except that a
    /// combining mark right after a separator or `#` no longer hides it (nothing valid has one).
    static func fields(_ line: Substring) -> [Substring] {
        var result: [Substring] = []
        let bytes = line.utf8
        var start: Substring.Index? = nil
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "#") { break }
            if b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r") {
                if let s = start { result.append(line[s..<i]); start = nil }
            } else if start == nil {
                start = i
            }
            bytes.formIndex(after: &i)
        }
        if let s = start { result.append(line[s..<i]) }
        return result
    }

    /// Parses `ANGLE [BUTTONS]`. Returns nil for a blank or comment line.
    package static func parse(_ line: Substring) throws(Problem) -> ControllerState? {
        let f = fields(line)
        if f.isEmpty { return nil }
        guard f.count <= 2 else {
            throw Problem("expected ANGLE BUTTONS (e.g. `0.3 forward+a`), found \(f.count) fields")
        }
        return try state(angle: f[0], buttons: f.count > 1 ? f[1] : nil)
    }

    static func state(angle text: Substring, buttons: Substring?) throws(Problem) -> ControllerState {
        let angle = try angle(text)
        guard let buttons else { return ControllerState(angle: angle) }
        guard let parsed = Buttons(parsing: buttons) else {
            throw Problem("bad buttons `\(buttons)` (use a number, 0x hex, none, or names joined by + such as forward+a; names: \(Buttons.names.map(\.name).joined(separator: " ")))")
        }
        return ControllerState(angle: angle, buttons: parsed)
    }

    static func angle(_ text: Substring) throws(Problem) -> Float {
        guard let value = Float(text), value.isFinite else {
            throw Problem("bad angle `\(text)` (radians as a decimal, e.g. -0.25)")
        }
        guard value.magnitude <= ControllerState.maxAngle else {
            throw Problem("angle \(text) is beyond ±1.5707964 rad (±π/2)")
        }
        return value
    }
}

/// Splits a byte stream into numbered lines, with a bound on a line's length so that a stream
/// without newlines cannot grow memory. A too-long line is reported once and skipped up to its
/// newline. Feed bytes with ``feed(_:)``, take lines with ``next()``; ``finish()`` at end of file
/// hands out a last line that had no newline.
struct LineSplitter {
    enum Line: Equatable {
        case text(number: Int, Substring)
        case tooLong(number: Int)
    }

    let maximumLength: Int
    private var buffer: [UInt8] = []
    private var scanned = 0
    private var number = 0
    /// Dropping the rest of an over-long line until its newline.
    private var skipping = false
    private var finished = false

    init(maximumLength: Int = 4096) { self.maximumLength = maximumLength }

    mutating func feed(_ bytes: some Collection<UInt8>) { buffer.append(contentsOf: bytes) }

    /// No more bytes will come: a last line without a newline is handed out by ``next()``.
    mutating func finish() { finished = true }

    mutating func next() -> Line? {
        while true {
            if let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                scanned = 0
                if skipping {
                    skipping = false
                    continue
                }
                number += 1
                if line.count > maximumLength { return .tooLong(number: number) }
                return .text(number: number, Substring(decoding: line, as: UTF8.self))
            }
            scanned = buffer.count
            if skipping {
                buffer.removeAll(keepingCapacity: true)
                scanned = 0
                return nil
            }
            if buffer.count > maximumLength {
                number += 1
                buffer.removeAll(keepingCapacity: true)
                scanned = 0
                skipping = true
                return .tooLong(number: number)
            }
            if finished && !buffer.isEmpty {
                number += 1
                let line = buffer
                buffer.removeAll()
                scanned = 0
                return .text(number: number, Substring(decoding: line, as: UTF8.self))
            }
            return nil
        }
    }
}
