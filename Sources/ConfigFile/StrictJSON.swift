/// A strict JSON (RFC 8259) reader for mapping files, straight into ``ConfigValue``: no trailing
/// commas, no comments, no NaN/Infinity, no bare words, nothing after the value but whitespace,
/// no duplicate keys. Foundation's `JSONSerialization` on Linux accepts trailing commas, which
/// let a half-edited file through.
struct StrictJSON {
    private let bytes: [UInt8]
    private var i = 0
    /// Nesting limit, so a file of `[[[[…` cannot exhaust the stack.
    static let maxDepth = 64

    static func parse(_ text: String) throws(ConfigSyntaxError) -> ConfigValue {
        var parser = StrictJSON(bytes: Array(text.utf8))
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.i == parser.bytes.count else { throw parser.fail("trailing characters after the JSON value") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ what: String) -> ConfigSyntaxError {
        let line = 1 + bytes[..<min(i, bytes.count)].lazy.filter { $0 == UInt8(ascii: "\n") }.count
        return ConfigSyntaxError(line: line, message: "JSON syntax error: \(what)")
    }

    private var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

    private mutating func skipSpace() {
        while let c = peek, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { i += 1 }
    }

    private mutating func expect(_ c: UInt8, _ what: String) throws(ConfigSyntaxError) {
        guard peek == c else { throw fail("expected \(what)") }
        i += 1
    }

    private mutating func value(depth: Int) throws(ConfigSyntaxError) -> ConfigValue {
        guard depth < Self.maxDepth else { throw fail("nested deeper than \(Self.maxDepth) levels") }
        guard let c = peek else { throw fail("unexpected end of file, expected a value") }
        switch c {
        case UInt8(ascii: "{"):
            i += 1
            skipSpace()
            var entries: [(key: String, value: ConfigValue)] = []
            if peek == UInt8(ascii: "}") { i += 1; return .table(entries) }
            while true {
                skipSpace()
                guard peek == UInt8(ascii: "\"") else { throw fail("expected a \"key\" (a trailing comma is not allowed)") }
                let key = try string()
                if entries.contains(where: { $0.key == key }) { throw fail("duplicate key \"\(key)\"") }
                skipSpace()
                try expect(UInt8(ascii: ":"), "':' after a key")
                skipSpace()
                entries.append((key, try value(depth: depth + 1)))
                skipSpace()
                if peek == UInt8(ascii: ",") { i += 1; continue }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return .table(entries.sorted { $0.key < $1.key })
            }
        case UInt8(ascii: "["):
            i += 1
            skipSpace()
            var items: [ConfigValue] = []
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
        case UInt8(ascii: "n"): try word("null"); return .other("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number()
        default:
            throw fail("unexpected character '\(Unicode.Scalar(c))'")
        }
    }

    private mutating func word(_ w: String) throws(ConfigSyntaxError) {
        let u = Array(w.utf8)
        guard i + u.count <= bytes.count, Array(bytes[i..<i + u.count]) == u else { throw fail("expected \(w)") }
        i += u.count
    }

    private mutating func digits() -> Int {
        let start = i
        while let c = peek, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") { i += 1 }
        return i - start
    }

    private mutating func number() throws(ConfigSyntaxError) -> ConfigValue {
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
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if integral, let v = Int(text) { return .integer(v) }
        guard let d = Double(text), d.isFinite else { throw fail("number \(text) out of range") }
        return .float(d)
    }

    private mutating func hex4() throws(ConfigSyntaxError) -> UInt32 {
        guard i + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) else {
            throw fail("a \\u escape needs four hex digits")
        }
        i += 4
        return v
    }

    private mutating func string() throws(ConfigSyntaxError) -> String {
        i += 1   // opening quote
        var out: [UInt8] = []
        while true {
            guard let c = peek else { throw fail("unterminated string") }
            i += 1
            switch c {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
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
