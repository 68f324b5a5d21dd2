/// The small, strict JSON this format needs (RFC 8259): one value per line, objects of strings,
/// numbers, booleans, null and arrays of those. Standard library only, so the codec stays free of
/// Foundation.
///
/// Strict where it matters for a file that ends at a robot's motors: no NaN or Infinity (JSON has
/// none, and a number too large for a Double is refused rather than made infinite), no duplicate
/// keys, no trailing bytes, nesting at most ``maximumDepth`` deep.
public enum RecordJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([RecordJSON])
    /// Members in file order (keys are unique).
    case object([(key: String, value: RecordJSON)])

    public static let maximumDepth = 8

    public static func == (a: RecordJSON, b: RecordJSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.number(x), .number(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The member `key` of an object (nil for a missing key or a non-object).
    public subscript(key: String) -> RecordJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Parses exactly one value from `bytes` (surrounding spaces allowed); the reason on failure.
    public static func parse(_ bytes: some Collection<UInt8>) -> Result<RecordJSON, ParseError> {
        var parser = Parser(bytes: Array(bytes))
        do throws(ParseError) {
            parser.skipSpace()
            let value = try parser.value(depth: 0)
            parser.skipSpace()
            guard parser.index == parser.bytes.count else { throw parser.fail("unexpected bytes after the value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    public struct ParseError: Error, Equatable, Sendable {
        /// 0-based byte offset in the line.
        public let offset: Int
        public let reason: String
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0

        func fail(_ reason: String) -> ParseError { ParseError(offset: index, reason: reason) }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0D, 0x0A].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(ParseError) -> RecordJSON {
            guard depth < RecordJSON.maximumDepth else { throw fail("nested deeper than \(RecordJSON.maximumDepth)") }
            guard index < bytes.count else { throw fail("the line ends where a value should be") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw fail("not a JSON value (NaN and Infinity are not JSON numbers)")
            }
        }

        mutating func literal(_ word: String) throws(ParseError) {
            let w = Array(word.utf8)
            guard bytes.count - index >= w.count, Array(bytes[index..<index + w.count]) == w else {
                throw fail("not a JSON value (NaN and Infinity are not JSON numbers)")
            }
            index += w.count
        }

        mutating func object(depth: Int) throws(ParseError) -> RecordJSON {
            index += 1
            var members: [(key: String, value: RecordJSON)] = []
            var seen: Set<String> = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object([]) }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name in quotes") }
                let key = try string()
                guard seen.insert(key).inserted else { throw fail("member \"\(key)\" appears twice") }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected : after \"\(key)\"") }
                index += 1
                skipSpace()
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard index < bytes.count else { throw fail("the line ends inside an object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw fail("expected , or } in an object")
            }
        }

        mutating func array(depth: Int) throws(ParseError) -> RecordJSON {
            index += 1
            var items: [RecordJSON] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array([]) }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw fail("the line ends inside an array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                throw fail("expected , or ] in an array")
            }
        }

        mutating func string() throws(ParseError) -> String {
            index += 1
            var out: [UInt8] = []
            while true {
                guard index < bytes.count else { throw fail("the line ends inside a string") }
                let b = bytes[index]
                index += 1
                switch b {
                case UInt8(ascii: "\""):
                    guard let s = String(validating: out, as: UTF8.self) else { throw fail("a string is not UTF-8") }
                    return s
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw fail("the line ends inside an escape") }
                    let e = bytes[index]
                    index += 1
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
                            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw fail("a lone surrogate in \\u escape")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate in \\u escape") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let u = Unicode.Scalar(scalar) else { throw fail("a lone surrogate in \\u escape") }
                        out += Array(String(Character(u)).utf8)
                    default: throw fail("unknown escape \\\(Character(Unicode.Scalar(e)))")
                    }
                case 0..<0x20: throw fail("a control character inside a string")
                default: out.append(b)
                }
            }
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw fail("a short \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[index]
                let d: UInt32
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
                default: throw fail("a bad \\u escape")
                }
                v = v << 4 | d
                index += 1
            }
            return v
        }

        /// RFC 8259's number grammar, checked byte by byte before `Double` converts it.
        mutating func number() throws(ParseError) -> Double {
            let start = index
            func digits(_ p: inout Parser) -> Int {
                let s = p.index
                while p.index < p.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p.bytes[p.index]) { p.index += 1 }
                return p.index - s
            }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let intStart = index
            let n = digits(&self)
            guard n > 0 else { throw fail("a number without digits") }
            if n > 1, bytes[intStart] == UInt8(ascii: "0") { throw fail("a number with a leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits(&self) > 0 else { throw fail("a number without digits after the point") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits(&self) > 0 else { throw fail("a number without digits in its exponent") }
            }
            guard index - start <= 64 else { throw fail("a number longer than 64 characters") }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let d = Double(text), d.isFinite else { throw fail("the number \(text) is out of range") }
            return d
        }
    }

    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
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
