import CQRencode

/// A QR code for the terminal, so a phone joins by scanning (`analog-remote web` prints its URL
/// this way). libqrencode makes the symbol; this draws it with half blocks, two modules a
/// character cell, black on white with a quiet zone, whatever the terminal's own colours.
package enum TerminalQR {
    /// The symbol's modules, row by row (true = dark), error correction level M; nil when the
    /// text does not fit a QR code (over ~2 kB) or libqrencode fails.
    package static func modules(_ text: String) -> [[Bool]]? {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, let data = code.pointee.data else { return nil }
        return (0..<width).map { y in (0..<width).map { x in data[y * width + x] & 1 == 1 } }
    }

    /// The code as lines of text with ANSI colours; a one-line note when the text cannot be
    /// encoded.
    package static func render(_ text: String, quietZone: Int = 2) -> String {
        guard let rows = modules(text) else { return "(no QR code: the text is too long)\n" }
        let width = rows.count + 2 * quietZone
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - quietZone, y - quietZone)
            guard my >= 0, my < rows.count, mx >= 0, mx < rows.count else { return false }
            return rows[my][mx]
        }
        var out = ""
        var y = 0
        while y < width {
            for x in 0..<width {
                // Upper half block: foreground = the upper module, background = the lower one.
                let fg = dark(x, y) ? "30" : "97"
                let bg = dark(x, y + 1) && y + 1 < width ? "40" : "107"
                out += "\u{1B}[\(fg);\(bg)m▀"
            }
            out += "\u{1B}[0m\n"
            y += 2
        }
        return out
    }
}
