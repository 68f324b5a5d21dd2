import RemoteWire
import Testing

/// The one rule for text from outside: escaped as DisplayText escapes it, then at most 255 UTF-8
/// bytes cut at a character boundary; and a fixed point, so text shown and sent on keeps its bytes.
struct WireTextTests {
    static let samples = [
        "", "Ann", "Zoë 🤖", "OWNED BY \u{1B}[2Jx", "a\nb\r\tc", String(repeating: "\u{0}", count: 200),
        String(repeating: "日本語", count: 100), String(repeating: "e\u{301}", count: 200), "\u{202E}evil", "\u{9B}31m",
        String(repeating: "x", count: 254) + "\u{1}", String(repeating: "🤖", count: 70),
    ]

    @Test(arguments: samples)
    func theRuleHoldsForAnyText(raw: String) {
        let text = WireText(raw)
        #expect(text.text.utf8.count <= WireText.maximumBytes)
        #expect(!text.text.unicodeScalars.contains(where: DisplayText.needsEscape))
        #expect(WireText(text.text) == text, "a fixed point")
        // Nothing is cut that fits: the whole escaped text, or its longest prefix of whole characters.
        let escaped = DisplayText.sanitised(raw)
        #expect(escaped.hasPrefix(text.text))
        if escaped.utf8.count <= WireText.maximumBytes {
            #expect(text.text == escaped)
        } else {
            let next = escaped[escaped.index(escaped.startIndex, offsetBy: text.text.count)...].first.map { String($0).utf8.count } ?? 0
            #expect(text.text.utf8.count + next > WireText.maximumBytes)
        }
    }

    @Test func controlCharactersAreShownEscapedAndLongTextIsCutAtACharacter() {
        #expect(WireText("a\u{1B}b").text == "a\\u{1B}b")
        #expect(WireText(String(repeating: "\u{0}", count: 200)).text == String(repeating: "\\u{0}", count: 51))
        #expect(WireText(String(repeating: "日本語", count: 100)).text == String(repeating: "日本語", count: 28) + "日")
        let literal: WireText = "line\nbreak"
        #expect(literal.text == "line\\u{A}break")
        let who = "Ann\u{7}"
        let interpolated: WireText = "owned by \(who)"
        #expect(interpolated.text == "owned by Ann\\u{7}")
        #expect(WireText("Ann").matches("Ann") && !WireText("Ann").matches("ann"))
    }
}
