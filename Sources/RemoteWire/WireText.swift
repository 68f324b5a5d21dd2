/// Text that came from outside (a control message, a TXT record, a recording, a page), as it may
/// be shown: every control character and bidirectional override escaped (``DisplayText``), and
/// at most ``maximumBytes`` UTF-8 bytes, cut at a character boundary. There is no other way to
/// make one, so whatever holds a `WireText` — a status line, a JSON log, a page, the dashboard —
/// holds text that cannot drive a terminal, forge a log line or outgrow a `str8`.
///
/// The rule is idempotent: `WireText(WireText(x).text) == WireText(x)`, so text read, shown and
/// sent on again keeps its bytes.
public struct WireText: Hashable, Sendable, Comparable, CustomStringConvertible,
    ExpressibleByStringInterpolation {
    /// A `str8`'s limit (Protocol.md §7.1): the longest text any message carries.
    public static let maximumBytes = 255

    /// The text, safe to show.
    public let text: String

    /// `untrusted` made safe to show: escaped, then cut to ``maximumBytes``.
    public init(_ untrusted: some StringProtocol) {
        text = Self.cut(DisplayText.sanitised(String(untrusted)), to: Self.maximumBytes)
    }

    /// A text written in the source (checked by the same rule).
    public init(stringLiteral value: String) { self.init(value) }

    /// A text written in the source around values, which may be untrusted: the whole is checked.
    public init(stringInterpolation: DefaultStringInterpolation) { self.init(String(stringInterpolation: stringInterpolation)) }

    public static let empty = WireText("")

    public var isEmpty: Bool { text.isEmpty }
    public var description: String { text }
    public static func < (a: WireText, b: WireText) -> Bool { a.text < b.text }

    /// Whether `other` would be shown as this text.
    public func matches(_ other: some StringProtocol) -> Bool { WireText(other) == self }

    /// `text` cut to at most `limit` UTF-8 bytes, at a character boundary (an escape may be cut
    /// short: it is printable text either way).
    public static func cut(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var end = text.startIndex
        var bytes = 0
        for index in text.indices {
            let next = text.index(after: index)
            let size = text.utf8.distance(from: index, to: next)
            guard bytes + size <= limit else { break }
            bytes += size
            end = next
        }
        return String(text[..<end])
    }
}
