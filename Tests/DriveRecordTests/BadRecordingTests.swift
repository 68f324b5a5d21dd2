import DriveRecord
import Foundation
import Testing

/// What the reader refuses, and where it says the problem is (Protocol.md §10.4).
@Suite struct BadRecordingTests {
    static let header = #"{"format":"analog-remote-recording","version":1,"kind":"drive","start_unix_ms":0,"input":"keyboard"}"#

    static func state(_ t: Double, _ angle: String = "0.1", _ buttons: Int = 1) -> String {
        #"{"t":\#(t),"e":"state","angle":\#(angle),"buttons":\#(buttons)}"#
    }

    static func decode(_ lines: [String], newlineAtEnd: Bool = true) -> Result<Recording, RecordProblem> {
        let text = lines.joined(separator: "\n") + (newlineAtEnd ? "\n" : "")
        return Result { () throws(RecordProblem) in try Recording.decode(Array(text.utf8)) }
    }

    static func problem(_ lines: [String], newlineAtEnd: Bool = true) -> RecordProblem? {
        if case .failure(let p) = decode(lines, newlineAtEnd: newlineAtEnd) { return p }
        return nil
    }

    @Test func anotherVersionIsRefusedOnLineOne() {
        let p = Self.problem([Self.header.replacingOccurrences(of: #""version":1"#, with: #""version":2"#), Self.state(0)])
        #expect(p?.line == 1)
        #expect(p?.reason.contains("format version 2 is not supported") == true)
    }

    /// A version too large for Int64 once trapped while the refusal was being written (fuzzer).
    @Test(arguments: ["1e300", "-1e300", "9.3e18", "1.7976931348623157e308", "12345678901234567", "2.5"])
    func anyOtherVersionNumberIsRefusedInWords(version: String) {
        let p = Self.problem([Self.header.replacingOccurrences(of: #""version":1"#, with: #""version":\#(version)"#), Self.state(0)])
        #expect(p?.line == 1)
        #expect(p?.reason.hasPrefix("format version ") == true, "\(version): \(String(describing: p))")
        #expect(p?.reason.contains("is not supported") == true)
    }

    @Test func numbersOfAnySizeArePrintedWithoutATrap() {
        #expect(RecordNumber.plain(1e300, places: 3) == "1e+300")
        #expect(RecordNumber.plain(-1e300, places: 0) == "-1e+300")
        #expect(RecordNumber.plain(1e16, places: 3) == "10000000000000000")
        #expect(RecordNumber.plain(-2.5, places: 3) == "-2.5")
        #expect(RecordNumber.plain(0.001, places: 3) == "0.001")
        #expect(RecordNumber.plain(.nan, places: 3) == "0")
    }

    @Test func timesThatGoBackAreRefusedWhereTheyDo() {
        let p = Self.problem([Self.header, Self.state(1), Self.state(2), Self.state(1.5)])
        #expect(p == RecordProblem(line: 4, reason: "time 1.5 s is before the previous entry's 2 s (times must not decrease)"))
    }

    @Test func garbageOnLine120IsNamed() {
        var lines = [Self.header] + (1...118).map { Self.state(Double($0) / 100) }
        lines.append("garbage")
        lines += (0..<10).map { Self.state(2 + Double($0)) }
        let p = Self.problem(lines)
        #expect(p?.line == 120)
        #expect(p?.reason.hasPrefix("not JSON at byte 1") == true)
    }

    @Test(arguments: ["NaN", "nan", "Infinity", "-Infinity", "1e999", "\"0.1\"", "2"])
    func aNonNumberOrOutOfRangeAngleIsRefused(angle: String) {
        let p = Self.problem([Self.header, Self.state(0), Self.state(1, angle)])
        #expect(p?.line == 3, "\(angle): \(String(describing: p))")
    }

    @Test func aLastLineCutShortIsLeftOutAndReported() throws {
        let whole = [Self.header, Self.state(0), Self.state(1)]
        let cut = Self.state(2)
        for length in 1..<cut.count {
            let lines = whole + [String(cut.prefix(length))]
            guard case .success(let r) = Self.decode(lines, newlineAtEnd: false) else {
                Issue.record("a last line cut at \(length) was refused")
                continue
            }
            #expect(r.entries.count == 2)
            #expect(r.truncatedLine == 4)
            #expect(r.truncationWarning(file: "f.jsonl")?.hasPrefix("f.jsonl:4: warning: the last line is cut short") == true)
        }
        // A whole last line without its newline is whole.
        let r = try Self.decode(whole, newlineAtEnd: false).get()
        #expect(r.entries.count == 2 && r.truncatedLine == nil)
    }

    /// Only the *last* line may be cut short: a bad line that ends in a newline is an error.
    @Test func aBadLastLineWithItsNewlineIsAnError() {
        #expect(Self.problem([Self.header, Self.state(0), #"{"t":1,"e":"sta"#])?.line == 3)
    }

    @Test func emptyOrHeaderlessFilesAreRefused() {
        #expect(Self.problem([], newlineAtEnd: false) == RecordProblem(line: 0, reason: "empty: no header line (is this an analog-remote recording?)"))
        #expect(Self.problem([Self.state(0)])?.line == 1)
        #expect(Self.problem([#"{"format":"something-else","version":1}"#])?.reason.contains("not an analog-remote recording") == true)
    }

    @Test func unknownEventsAreSkippedForNewerWriters() throws {
        let r = try Self.decode([Self.header, #"{"t":0.5,"e":"telemetry","volts":7.2}"#, Self.state(1)]).get()
        #expect(r.entries.map(\.event) == [.state(angle: 0.1, buttons: 1)])
    }

    @Test func duplicateKeysAndTrailingBytesAreRefused() {
        #expect(Self.problem([Self.header, #"{"t":1,"t":2,"e":"resumed"}"#])?.line == 2)
        #expect(Self.problem([Self.header, #"{"t":1,"e":"resumed"} x"#])?.line == 2)
        #expect(Self.problem([Self.header, #"{"t":-1,"e":"resumed"}"#])?.line == 2)
    }
}
