import TerminalQR
import Testing

/// The terminal QR code: a real symbol (finder patterns where a scanner looks for them), drawn
/// two modules per character with a quiet zone.
struct TerminalQRTests {
    let url = "https://192.168.1.5:8443/"

    @Test func aURLBecomesASquareSymbolWithItsThreeFinderPatterns() throws {
        let rows = try #require(TerminalQR.modules(url))
        let n = rows.count
        #expect(n >= 21 && (n - 21) % 4 == 0, "a QR symbol is 21 + 4k modules wide, got \(n)")
        #expect(rows.allSatisfy { $0.count == n })
        // A finder pattern: 7×7, dark ring, light ring, dark 3×3 core.
        func finder(_ x0: Int, _ y0: Int) -> Bool {
            (0..<7).allSatisfy { y in
                (0..<7).allSatisfy { x in
                    let ring = min(x, y, 6 - x, 6 - y)
                    return rows[y0 + y][x0 + x] == (ring != 1)
                }
            }
        }
        #expect(finder(0, 0) && finder(n - 7, 0) && finder(0, n - 7))
    }

    @Test func theDrawingHasOneLinePerTwoRowsAndAQuietZone() throws {
        let n = try #require(TerminalQR.modules(url)).count
        let lines = TerminalQR.render(url, quietZone: 2).split(separator: "\n")
        #expect(lines.count == (n + 4 + 1) / 2)
        #expect(lines.allSatisfy { $0.filter { $0 == "▀" }.count == n + 4 })
        #expect(lines.allSatisfy { $0.hasSuffix("\u{1B}[0m") }, "colours are reset at the end of every line")
    }

    @Test func textTooLongForAQRCodeSaysSo() {
        let long = String(repeating: "x", count: 8000)
        #expect(TerminalQR.modules(long) == nil)
        #expect(TerminalQR.render(long).contains("too long"))
    }
}
