/// The page's state message in the one form its script writes it, `{"t":"s","a":NUMBER,"b":DIGITS}`
/// (`JSON.stringify` of `{t, a, b}`: no spaces, keys in that order), read without Foundation's
/// `JSONDecoder`, which cost about 35,000 instructions a message — a third of the server's work
/// per phone message (BENCHMARKS.md, row 3w).
///
/// Contract: ``scan(_:)`` returns the two values only when the text is exactly that form, the
/// number is JSON's number grammar and finite as a Double, and the buttons are plain digits
/// (no sign, no leading zero, at most 10). Anything else — whitespace, another key order, a
/// missing or extra key, `-1`, `1e999` — returns nil and goes through `JSONDecoder`, so every
/// text gets the outcome (value or error line) that `JSONDecoder` gives it; PageMessageTests
/// compare the two ways.
enum StateText {
    private static let head = Array(#"{"t":"s","a":"#.utf8)
    private static let middle = Array(#","b":"#.utf8)
    /// Longer numbers (the page rounds to 4 decimals) take the general way.
    private static let longestNumber = 40

    static func scan(_ text: String) -> (angle: Double, buttons: Int64)? {
        text.utf8.withContiguousStorageIfAvailable(scan) ?? nil
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (angle: Double, buttons: Int64)? {
        guard bytes.count > head.count + middle.count + 2, bytes.starts(with: head) else { return nil }
        var i = head.count
        let numberStart = i
        guard let numberEnd = jsonNumber(bytes, from: i), numberEnd - numberStart <= longestNumber else { return nil }
        i = numberEnd
        guard bytes.count - i > middle.count, bytes[i..<(i + middle.count)].elementsEqual(middle) else { return nil }
        i += middle.count
        // Buttons: "0", or 1–10 digits without a leading zero, then the closing brace and the end.
        var buttons: Int64 = 0
        let digitsStart = i
        while i < bytes.count, isDigit(bytes[i]) {
            buttons = buttons * 10 + Int64(bytes[i] &- 0x30)
            i += 1
            if i - digitsStart > 10 { return nil }
        }
        let digits = i - digitsStart
        guard digits > 0, digits == 1 || bytes[digitsStart] != 0x30 else { return nil }
        guard i == bytes.count - 1, bytes[i] == UInt8(ascii: "}") else { return nil }
        let number = String(decoding: UnsafeBufferPointer(rebasing: bytes[numberStart..<numberEnd]), as: UTF8.self)
        guard let angle = Double(number), angle.isFinite else { return nil }
        return (angle, buttons)
    }

    /// The end of a JSON number starting at `start` (RFC 8259 §6: `-? (0 | [1-9][0-9]*)
    /// (. [0-9]+)? ([eE] [+-]? [0-9]+)?`), or nil when there is none.
    private static func jsonNumber(_ b: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, isDigit(b[i]) else { return nil }
        if b[i] == 0x30 {
            i += 1
        } else {
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard i < b.count, isDigit(b[i]) else { return nil }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, isDigit(b[i]) else { return nil }
            while i < b.count, isDigit(b[i]) { i += 1 }
        }
        return i
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
}
