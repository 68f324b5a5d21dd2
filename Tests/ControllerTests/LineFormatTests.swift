@testable import Controller
import Foundation
import PropertyBased
import RemoteWire
import TestSupport
import Testing

@Suite struct StateLineTests {
    @Test(arguments: [
        ("0 0", ControllerState(angle: 0, buttons: [])),
        ("0.5 forward", ControllerState(angle: 0.5, buttons: .forward)),
        ("-0.25\tbackward+A", ControllerState(angle: -0.25, buttons: [.backward, .a])),
        ("  0.1   0x0c  ", ControllerState(angle: 0.1, buttons: [.a, .b])),
        ("0.1 12 # comment", ControllerState(angle: 0.1, buttons: [.a, .b])),
        ("1.5707964 none", ControllerState(angle: ControllerState.maxAngle, buttons: [])),
        ("-1.5707964 none\r", ControllerState(angle: -ControllerState.maxAngle, buttons: [])),
        ("0.3", ControllerState(angle: 0.3, buttons: [])),
    ])
    func parsesGoodLines(line: String, expected: ControllerState) throws {
        #expect(try StateLine.parse(line[...]) == expected)
    }

    /// The fields are split on UTF-8 bytes; they are the ones a split by `Character` gave (the
    /// reference below is the old code), for lines made of separators, `#`, digits, letters and
    /// non-ASCII text. (Combining marks right after a separator differ: see the next test.)
    @Test func fieldsSplitOnBytesAsTheyDidOnCharacters() {
        func reference(_ line: Substring) -> [Substring] {
            let content = line.firstIndex(of: "#").map { line[..<$0] } ?? line
            return content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
        }
        let pieces = [" ", "\t", "\r", "#", "0.25", "-1e-3", "forward+a", "0x0c", "é", "日本", "👍🏽", "x\u{301}", "", "  "]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let line = (0..<Int.random(in: 0...8, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
            #expect(StateLine.fields(line[...]).map(String.init) == reference(line[...]).map(String.init), "\(line.debugDescription)")
        }
    }

    /// A combining mark does not glue itself to a space or `#` before it: the byte is a
    /// separator or starts a comment whatever follows (a split by `Character` saw one
    /// character there, and refused a line whose comment began with such a pair).
    @Test func aCombiningMarkAfterASeparatorOrHashDoesNotHideIt() throws {
        #expect(StateLine.fields("0.25 \u{301}x"[...]).map(String.init) == ["0.25", "\u{301}x"])
        #expect(try StateLine.parse("0.25 1 #\u{301} a comment"[...]) == ControllerState(angle: 0.25, buttons: .forward))
    }

    @Test(arguments: ["", "   ", "# a comment", "\t# indented comment", "\r"])
    func blankAndCommentLinesCarryNoState(line: String) throws {
        #expect(try StateLine.parse(line[...]) == nil)
    }

    @Test(arguments: [
        ("abc forward", "bad angle `abc`"),
        ("nan 0", "bad angle `nan`"),
        ("inf 0", "bad angle `inf`"),
        ("1.6 0", "beyond ±1.5707964"),
        ("-2 0", "beyond ±1.5707964"),
        ("0 jump", "bad buttons `jump`"),
        ("0 forward+", "bad buttons `forward+`"),
        ("0 0x1ffffffff", "bad buttons"),
        ("0 forward a", "found 3 fields"),
    ])
    func refusesBadLinesSayingWhy(line: String, reason: String) {
        #expect {
            try StateLine.parse(line[...])
        } throws: { error in
            (error as? StateLine.Problem)?.description.contains(reason) == true
        }
    }
}

@Suite struct LineSplitterTests {
    func all(_ chunks: [[UInt8]], max: Int = 4096, finish: Bool = true) -> [LineSplitter.Line] {
        var s = LineSplitter(maximumLength: max)
        var out: [LineSplitter.Line] = []
        for c in chunks {
            s.feed(c)
            while let l = s.next() { out.append(l) }
        }
        if finish {
            s.finish()
            while let l = s.next() { out.append(l) }
        }
        return out
    }

    @Test func numbersLinesAndHandsOutALastLineWithoutNewline() {
        let lines = all([Array("a\n\nb c\nlast".utf8)])
        #expect(lines == [.text(number: 1, "a"), .text(number: 2, ""), .text(number: 3, "b c"), .text(number: 4, "last")])
    }

    @Test func anUnfinishedLineWaitsForItsNewline() {
        #expect(all([Array("partial".utf8)], finish: false) == [])
    }

    @Test func anOverlongLineIsReportedOnceAndSkippedToItsNewline() {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 50)
        let lines = all([Array("ok\n".utf8), long, long, Array("tail\nnext\n".utf8)], max: 16)
        #expect(lines == [.text(number: 1, "ok"), .tooLong(number: 2), .text(number: 3, "next")])
    }

    /// The same stream split anywhere gives the same lines.
    @Test func randomChunkingGivesTheSameLines() async {
        let text = Array("0 0\n0.5 forward\n\n# c\nbad\n-0.2 a+b\n0.1".utf8)
        let whole = all([text])
        await propertyCheck(count: 200, input: Gen.int(in: 1...7).array(of: 1...40)) { sizes in
            var chunks: [[UInt8]] = []
            var i = 0, k = 0
            while i < text.count {
                let n = min(sizes[k % sizes.count], text.count - i)
                chunks.append(Array(text[i..<i + n]))
                i += n
                k += 1
            }
            #expect(all(chunks) == whole)
        }
    }
}

@Suite struct ScriptTests {
    @Test func parsesTimedLines() throws {
        let script = try Script.parse("# demo\n0 0 forward\n\n500 0.3 forward # turn\n500 0.3 forward+a\n1200 0 none\n", file: "d.script")
        #expect(script.steps.map(\.at) == [.zero, .milliseconds(500), .milliseconds(500), .milliseconds(1200)])
        #expect(script.steps.map(\.line) == [2, 4, 5, 6])
        #expect(script.steps[2].state == ControllerState(angle: 0.3, buttons: [.forward, .a]))
    }

    @Test(arguments: [
        ("0 0 none\n100 0.1 zoom\n", "d.script:2: bad buttons `zoom`"),
        ("500 0 none\n400 0 none\n", "d.script:2: time 400 ms is before line 1's"),
        ("-5 0 none\n", "d.script:1: bad time `-5`"),
        ("1.5 0 none\n", "d.script:1: bad time `1.5`"),
        ("0 0.1\n0 0 none extra\n", "d.script:2: expected T_MS ANGLE BUTTONS"),
        ("0\n", "d.script:1: expected T_MS ANGLE BUTTONS"),
        ("0 9 none\n", "d.script:1: angle 9 is beyond"),
        ("# nothing\n\n", "d.script: no timed lines"),
    ])
    func refusesBadScriptsNamingFileAndLine(text: String, message: String) {
        #expect {
            try Script.parse(text, file: "d.script")
        } throws: { error in
            (error as? Script.Problem)?.description.hasPrefix(message) == true
        }
    }

    @Test func aMissingFileIsAProblemNamingIt() {
        #expect {
            try Script.load(path: "/nonexistent/x.script")
        } throws: { error in
            (error as? Script.Problem)?.description == "/nonexistent/x.script: cannot read the script: no such file or directory"
        }
    }

    /// A FIFO is refused before it is opened (opening one blocks until a writer comes), and a
    /// NUL byte is named: the script goes through the config files' reader.
    @Test func aFIFOOrANULByteIsRefusedInOneLine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.path + "/drive.script"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect {
            try Script.load(path: fifo)
        } throws: { error in
            (error as? Script.Problem)?.description == "\(fifo): a FIFO, not a regular file; allowed: a regular file"
        }
        let nul = dir.path + "/nul.script"
        try Data("0 0 0\n\0 10 0.5 f\n".utf8).write(to: URL(fileURLWithPath: nul))
        #expect {
            try Script.load(path: nul)
        } throws: { error in
            (error as? Script.Problem)?.description == "\(nul): a NUL byte at offset 6 (line 2); allowed: text without NUL bytes"
        }
    }

    @Test func theShippedExampleScriptParses() throws {
        let script = try Script.load(path: Paths.repositoryFile("config-examples/drive-square.script").path)
        #expect(script.steps.count >= 8)
        #expect(script.steps.contains { $0.state.buttons.contains(.forward) && $0.state.angle != 0 })
        #expect(script.steps.last?.state == .neutral)
    }

    @Test func scriptSourcePlaysStepsAtTheirTimesThenEnds() {
        let t0 = ContinuousClock.now
        let script = Script(steps: [
            .init(at: .zero, state: .init(angle: 0, buttons: .forward), line: 1),
            .init(at: .milliseconds(100), state: .init(angle: 0.2, buttons: .forward), line: 2),
            .init(at: .milliseconds(250), state: .neutral, line: 3),
        ])
        let source = ScriptSource(script: script, name: "script:x")
        #expect(source.nextDeadline == nil)
        #expect(source.start(now: t0) == [.state(.init(angle: 0, buttons: .forward))])
        #expect(source.nextDeadline == t0 + .milliseconds(100))
        #expect(source.deadlinePassed(now: t0 + .milliseconds(99)) == [])
        #expect(source.deadlinePassed(now: t0 + .milliseconds(260)) == [.state(.init(angle: 0.2, buttons: .forward)), .state(.neutral), .end(.scriptFinished)])
        #expect(source.nextDeadline == nil)
        #expect(source.deadlinePassed(now: t0 + .milliseconds(300)) == [])
    }
}
