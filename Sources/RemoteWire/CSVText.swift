/// The one writer of every CSV file and download the project makes (the button game's results,
/// the lesson's log): RFC 4180 rows whose cells a spreadsheet reads as text, never as a formula.
///
/// A cell whose first character is `=`, `+`, `-`, `@`, a tab or a carriage return would be taken
/// as a formula by Excel, LibreOffice or Sheets (CSV injection: `=HYPERLINK("https://…"&A1)`
/// sends the sheet's cells away when clicked), so it gets a leading `'`, which spreadsheets
/// show as text and do not display. Then a cell holding a comma, a quote, a newline or a CR is
/// quoted, its quotes doubled. Rows end with CRLF.
package enum CSVText {
    /// The characters that make a cell a formula when they start it.
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// One cell, neutralised and quoted where needed.
    package static func cell(_ text: String) -> String {
        var s = text
        if let first = s.unicodeScalars.first, formulaStarts.contains(first) { s = "'" + s }
        // By scalar: "\r\n" is one Character, equal to neither "\r" nor "\n".
        guard s.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        var quoted = "\""
        for c in s {
            if c == "\"" { quoted.append("\"") }
            quoted.append(c)
        }
        return quoted + "\""
    }

    /// One row: its cells joined by commas, ending in CRLF.
    package static func row(_ cells: [String]) -> String {
        cells.map(cell).joined(separator: ",") + "\r\n"
    }
}
