/// Checks TOML text for the shapes that make TOMLKit 0.6.0 (toml++ underneath) abort the whole
/// process instead of reporting a parse error, so that every TOML reader (mapping files, gamepad,
/// MIDI, receive.toml/control.toml) refuses them with its usual one-line error first.
/// Pure text inspection: no TOMLKit here. Call ``problem(in:)`` before `TOMLTable(string:)`.
package enum TOMLPreflight {
    /// What is wrong, as "line N: …", or nil when the text may be handed to the parser.
    package static func problem(in text: String) -> String? {
        if let line = unparsableHeaderLine(text) {
            return "line \(line): a table header must start with a key name or a quoted key, e.g. [drive] (not valid TOML)"
        }
        if let line = braceInArrayLine(text) {
            return "line \(line): a } where an array element belongs (not valid TOML)"
        }
        return nil
    }

    /// The first line (1-based) holding a table header that TOMLKit cannot be given, or nil.
    ///
    /// Trap (found by the midi-config fuzz harness; it reaches every TOML reader): TOMLKit 0.6.0's toml++ *asserts* — aborting
    /// the whole process in a debug build — on a header whose first key starts with anything but
    /// a bare-key character or a quote: `[?x]`, `[.a]`, `[+]`, `[é]`, `[` or `[[` alone on a
    /// line. Such lines are refused here first. A line starting with `[` inside a multi-line
    /// string or array would be refused too; our config files (mapping, gamepad, MIDI, receive/control) have neither.
    /// toml++ skips a byte-order mark at the start of the text, so the first line is read past
    /// one too (found by the gamepad-config fuzz harness: a BOM, then `[` and a non-key character).
    static func unparsableHeaderLine(_ text: String) -> Int? {
        // Scalars, not Characters: a combining mark after "[" would join it into one Character.
        for (index, line) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var rest = (index == 0 && line.first == "\u{FEFF}" ? line.dropFirst() : line[...]).drop { $0 == " " || $0 == "\t" }
            guard rest.first == "[" else { continue }
            rest = rest.dropFirst()
            if rest.first == "[" { rest = rest.dropFirst() }
            rest = rest.drop { $0 == " " || $0 == "\t" }
            if let c = rest.first,
               c.isASCII && (("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || "_-\"']".unicodeScalars.contains(c)) {
                continue
            }
            return index + 1
        }
        return nil
    }

    /// The line of a `}` right after an array's `[` or a `,` (blanks, newlines and comments
    /// between), outside strings and comments; nil if there is none.
    ///
    /// Trap (found by the midi-config fuzz harness; it reaches every TOML reader): toml++ asserts on `x = [}`, `x = [1,}`,
    /// aborting a debug build, instead of reporting a parse error.
    static func braceInArrayLine(_ text: String) -> Int? {
        var line = 1
        var afterOpenOrComma = false
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar?
        func next() -> Unicode.Scalar? {
            if let p = pending { pending = nil; return p }
            return iterator.next()
        }
        while let c = next() {
            switch c {
            case "\n":
                line += 1
            case " ", "\t", "\r":
                break
            case "#":
                while let d = next(), d != "\n" {}
                line += 1
            case "\"", "'":
                // A string: skip to its closing quote (escapes in basic strings), counting newlines.
                afterOpenOrComma = false
                while let d = next() {
                    if d == "\n" { line += 1 }
                    if d == "\\" && c == "\"" { if next() == "\n" { line += 1 }; continue }
                    if d == c { break }
                }
            case "[", ",":
                afterOpenOrComma = true
            case "}":
                if afterOpenOrComma { return line }
            default:
                afterOpenOrComma = false
            }
        }
        return nil
    }
}
