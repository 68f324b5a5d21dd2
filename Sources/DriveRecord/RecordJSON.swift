/// The project's one strict JSON (RFC 8259) reader, standard library only: recordings read each
/// line with it (Protocol.md §10.1) and mapping files go through it too (Receiver's
/// `ConfigValue.parseJSON`). No trailing commas, no comments, no NaN/Infinity or other bare
/// words, no duplicate keys, nothing after the value but whitespace, nesting bounded — and a
/// number too large for a Double is refused rather than made infinite. (Foundation's
/// `JSONSerialization` on Linux accepts trailing commas, which let a half-edited file through.)
package enum RecordJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number written without a fraction or an exponent that fits an `Int`.
    case integer(Int)
    case number(Double)
    case string(String)
    case array([RecordJSON])
    /// Members in file order (keys are unique).
    case object([(key: String, value: RecordJSON)])

    /// Nesting limit for a recording's line (a mapping file allows more).
    package static let maximumDepth = 8

    package static func == (a: RecordJSON, b: RecordJSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.integer(x), .integer(y)): x == y
        case let (.number(x), .number(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The member `key` of an object (nil for a missing key or a non-object).
    package subscript(key: String) -> RecordJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Any number as a Double (an integer converted), else nil.
    package var double: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .number(let d): d
        default: nil
        }
    }

    /// Parses exactly one value from `bytes` (surrounding whitespace allowed).
    package static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int = maximumDepth) -> Result<RecordJSON, ParseError> {
        // The parser reads through a buffer pointer: on an array every byte read retained and
        // released it, which in a debug build cost more than the parsing itself.
        Array(bytes).withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer, maximumDepth: maximumDepth)
            do throws(ParseError) {
                parser.skipSpace()
                let value = try parser.value(depth: 0)
                parser.skipSpace()
                guard parser.i == parser.bytes.count else { throw parser.fail("trailing characters after the JSON value") }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
    }

    package struct ParseError: Error, Equatable, Sendable {
        /// 0-based byte offset where reading stopped.
        package let offset: Int
        /// 1-based line of that offset (for multi-line texts).
        package let line: Int
        package let reason: String
    }

    struct Parser {
        /// Valid only inside ``RecordJSON/parse(_:maximumDepth:)``'s `withUnsafeBufferPointer`.
        let bytes: UnsafeBufferPointer<UInt8>
        let maximumDepth: Int
        var i = 0

        init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
            self.bytes = bytes
            self.maximumDepth = maximumDepth
        }

        func fail(_ what: String) -> ParseError {
            let line = 1 + bytes[..<min(i, bytes.count)].lazy.filter { $0 == UInt8(ascii: "\n") }.count
            return ParseError(offset: i, line: line, reason: what)
        }

        var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func skipSpace() {
            while let c = peek, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { i += 1 }
        }

        mutating func expect(_ c: UInt8, _ what: String) throws(ParseError) {
            guard peek == c else { throw fail("expected \(what)") }
            i += 1
        }

        mutating func value(depth: Int) throws(ParseError) -> RecordJSON {
            guard depth < maximumDepth else { throw fail("nested deeper than \(maximumDepth) levels") }
            guard let c = peek else { throw fail("unexpected end of file, expected a value") }
            switch c {
            case UInt8(ascii: "{"):
                i += 1
                skipSpace()
                var entries: [(key: String, value: RecordJSON)] = []
                // Duplicates are found with a set: a scan of `entries` per key made a line of
                // thousands of keys quadratic (seconds for a few hundred KiB).
                var keys = Set<String>()
                if peek == UInt8(ascii: "}") { i += 1; return .object(entries) }
                while true {
                    skipSpace()
                    guard peek == UInt8(ascii: "\"") else { throw fail("expected a \"key\" (a trailing comma is not allowed)") }
                    let key = try string()
                    guard keys.insert(key).inserted else { throw fail("duplicate key \"\(key)\"") }
                    skipSpace()
                    try expect(UInt8(ascii: ":"), "':' after a key")
                    skipSpace()
                    entries.append((key, try value(depth: depth + 1)))
                    skipSpace()
                    if peek == UInt8(ascii: ",") { i += 1; continue }
                    try expect(UInt8(ascii: "}"), "',' or '}'")
                    return .object(entries)
                }
            case UInt8(ascii: "["):
                i += 1
                skipSpace()
                var items: [RecordJSON] = []
                if peek == UInt8(ascii: "]") { i += 1; return .array(items) }
                while true {
                    skipSpace()
                    if peek == UInt8(ascii: "]") { throw fail("a trailing comma is not allowed") }
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    if peek == UInt8(ascii: ",") { i += 1; continue }
                    try expect(UInt8(ascii: "]"), "',' or ']'")
                    return .array(items)
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): try word("true"); return .bool(true)
            case UInt8(ascii: "f"): try word("false"); return .bool(false)
            case UInt8(ascii: "n"): try word("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number()
            default:
                throw fail("unexpected character '\(Unicode.Scalar(c))'")
            }
        }

        mutating func word(_ w: String) throws(ParseError) {
            let u = Array(w.utf8)
            guard i + u.count <= bytes.count, Array(bytes[i..<i + u.count]) == u else { throw fail("expected \(w)") }
            i += u.count
        }

        mutating func digits() -> Int {
            let start = i
            while let c = peek, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") { i += 1 }
            return i - start
        }

        mutating func number() throws(ParseError) -> RecordJSON {
            let start = i
            if peek == UInt8(ascii: "-") { i += 1 }
            if peek == UInt8(ascii: "0") {
                i += 1
                if let c = peek, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") { throw fail("a number with a leading zero") }
            } else if digits() == 0 {
                throw fail("a '-' without digits")
            }
            var integral = true
            if peek == UInt8(ascii: ".") {
                i += 1
                integral = false
                guard digits() > 0 else { throw fail("a '.' without digits after it") }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                i += 1
                integral = false
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { throw fail("an exponent without digits") }
            }
            // Up to 18 digits always fit an Int: summed here, without a String per number.
            let negative = bytes[start] == UInt8(ascii: "-")
            if integral, i - start - (negative ? 1 : 0) <= 18 {
                var v = 0
                for d in bytes[(negative ? start + 1 : start)..<i] { v = v * 10 + Int(d &- UInt8(ascii: "0")) }
                return .integer(negative ? -v : v)
            }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            if integral, let v = Int(text) { return .integer(v) }
            guard let d = Double(text), d.isFinite else { throw fail("number \(text) out of range") }
            return .number(d)
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard i + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) else {
                throw fail("a \\u escape needs four hex digits")
            }
            i += 4
            return v
        }

        mutating func string() throws(ParseError) -> String {
            i += 1   // opening quote
            // Most strings hold no escape: up to the closing quote in one slice.
            let start = i
            while i < bytes.count, bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 {
                if bytes[i] == UInt8(ascii: "\"") {
                    i += 1
                    guard let s = String(validating: bytes[start..<i - 1], as: UTF8.self) else { throw fail("a string that is not UTF-8") }
                    return s
                }
                i += 1
            }
            var out = Array(bytes[start..<i])
            while true {
                guard let c = peek else { throw fail("unterminated string") }
                i += 1
                switch c {
                case UInt8(ascii: "\""):
                    guard let s = String(validating: out, as: UTF8.self) else { throw fail("a string that is not UTF-8") }
                    return s
                case UInt8(ascii: "\\"):
                    guard let e = peek else { throw fail("unterminated string") }
                    i += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard peek == UInt8(ascii: "\\"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "u") else {
                                throw fail("an unpaired surrogate escape")
                            }
                            i += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw fail("an unpaired surrogate escape") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let u = Unicode.Scalar(scalar), scalar != 0 else { throw fail("an invalid \\u escape") }
                        out += Array(String(Character(u)).utf8)
                    default:
                        throw fail("an invalid escape '\\\(Unicode.Scalar(e))'")
                    }
                case 0x00..<0x20:
                    throw fail("a control character inside a string")
                default:
                    out.append(c)
                }
            }
        }
    }

    /// `text` as a JSON string literal, quotes included.
    package static func quoted(_ text: String) -> String {
        var out = "\""
        for u in text.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20 || u.value == 0x7F:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
