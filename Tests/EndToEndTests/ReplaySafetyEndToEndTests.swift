#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RemoteWire
import TestSupport
import Testing

/// What protects a live drive protects a replay too: Ctrl-C and a teacher's stop-all end it
/// with the board at rest, a robot owned by someone else is never moved, a bad recording is
/// refused before anything is sent. And `--record` with another input; the receiver's black box.
@Suite(.serialized) struct ReplaySafetyEndToEndTests {
    final class Directory {
        let path = NSTemporaryDirectory() + "analog-remote-replay-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        func write(_ name: String, _ text: String) throws -> String {
            let p = "\(path)/\(name)"
            try text.write(toFile: p, atomically: true, encoding: .utf8)
            return p
        }
        func files() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    }

    static let header = #"{"format":"analog-remote-recording","version":1,"kind":"drive","start_unix_ms":0,"input":"script:x"}"#

    /// Neutral, then forward for `seconds`, then neutral.
    static func forwardFor(_ seconds: Int) -> String {
        var lines = [header, #"{"t":0,"e":"state","angle":0.0,"buttons":0}"#]
        for i in 1...(seconds * 10) { lines.append(#"{"t":\#(Double(i) / 10),"e":"state","angle":0.0,"buttons":1}"#) }
        lines.append(#"{"t":\#(seconds + 1),"e":"state","angle":0.0,"buttons":0}"#)
        return lines.joined(separator: "\n") + "\n"
    }

    static func moving(_ map: [UInt8]) -> Bool { !ClassroomReceiver.motorsStopped(map) }

    @Test func ctrlCEndsAReplayWithTheBoardAtRest() throws {
        let dir = try Directory()
        let file = try dir.write("long.jsonl", Self.forwardFor(30))
        let r = try ClassroomReceiver([])
        let play = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)", "--input", "replay:\(file)"])
        #expect(r.waitForMap(timeout: .seconds(10), Self.moving), "the replay never moved the robot: \(play.stderr)")
        play.signal(SIGINT)
        #expect(play.wait(timeout: .seconds(10)) == 0, "\(play.stderr)")
        #expect(r.waitForMap(ClassroomReceiver.motorsStopped), "the board is not at rest after Ctrl-C")
    }

    @Test func aTeachersStopAllEndsAReplayWithTheBoardAtRest() throws {
        let dir = try Directory()
        let file = try dir.write("long.jsonl", Self.forwardFor(30))
        let r = try ClassroomReceiver(["--session", "class-r"])
        let play = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)", "--input", "replay:\(file)"])
        #expect(r.waitForMap(timeout: .seconds(10), Self.moving), "the replay never moved the robot: \(play.stderr)")
        let stop = try ChildProcess(analogRemote: ["stop-all", "--quiet", "--session", "class-r", "--peer", "127.0.0.1:\(r.port)"])
        #expect(stop.wait(timeout: .seconds(10)) == 0, "\(stop.stdout) \(stop.stderr)")
        #expect(r.waitForMap(ClassroomReceiver.motorsStopped))
        #expect(play.wait(timeout: .seconds(10)) == 1, "the replay went on after the stop-all")
        #expect(play.stderr.contains("replay stopped: the teacher's stop-all holds the robot"), "\(play.stderr)")
        #expect(ClassroomReceiver.motorsStopped(try #require(r.maps.last)))
    }

    @Test func aReplayNeverMovesARobotOwnedBySomeoneElse() throws {
        let dir = try Directory()
        let file = try dir.write("short.jsonl", Self.forwardFor(2))
        let r = try ClassroomReceiver(["--failsafe-ms", "5000"])
        let owner = try ClassroomPeer(port: r.port)
        try owner.send(.neutral)   // the first valid state: this one owns the robot
        let play = try ChildProcess(analogRemote: ["control", "--peer", "127.0.0.1:\(r.port)", "--input", "replay:\(file)"])
        while play.isRunning {
            try owner.send(.neutral)   // the owner stays
            usleep(20_000)
        }
        #expect(play.wait() == 0, "\(play.stderr)")
        #expect(r.maps.allSatisfy(ClassroomReceiver.motorsStopped), "the replay moved an owned robot")
        #expect(play.stderr.contains("OWNED BY"), "the replay was told: \(play.stderr)")
    }

    /// Each bad recording: one line naming the file and the line, exit 2, nothing sent.
    @Test(arguments: ["version", "unordered", "garbage", "nan"])
    func aBadRecordingIsOneLineNamingFileAndLineAndExitTwo(name: String) throws {
        let state = { (t: Double, b: Int) in #"{"t":\#(t),"e":"state","angle":0.0,"buttons":\#(b)}"# }
        let (lines, line): ([String], Int) = switch name {
        case "version": ([Self.header.replacingOccurrences(of: #""version":1"#, with: #""version":2"#), state(0, 0)], 1)
        case "unordered": ([Self.header, state(1, 0), state(0.5, 1)], 3)
        case "garbage": ([Self.header] + (1...118).map { state(Double($0), 0) } + ["}{", state(200, 0)], 120)
        default: ([Self.header, #"{"t":1,"e":"state","angle":NaN,"buttons":1}"#], 2)
        }
        let dir = try Directory()
        let file = try dir.write("\(name).jsonl", lines.joined(separator: "\n") + "\n")
        let p = try ChildProcess(analogRemote: ["control", "--plain", "--quiet", "--peer", "127.0.0.1:9", "--input", "replay:\(file)"])
        #expect(p.wait() == 2)
        let out = p.stderr.split(separator: "\n")
        #expect(out.count == 1 && out[0].hasPrefix("analog-remote: replay \(file):\(line): "), "\(p.stderr)")
    }

    @Test func aLastLineCutShortByACrashReplaysUpToItWithAWarning() throws {
        let dir = try Directory()
        let text = [Self.header, #"{"t":0,"e":"state","angle":0.0,"buttons":0}"#, #"{"t":0.05,"e":"state","angle":0.1,"buttons":0}"#,
                    #"{"t":0.1,"e":"sta"#].joined(separator: "\n")
        let file = try dir.write("crash.jsonl", text)
        let r = try ClassroomReceiver([])
        let p = try ChildProcess(analogRemote: ["control", "--peer", "127.0.0.1:\(r.port)", "--input", "replay:\(file)"])
        #expect(p.wait(timeout: .seconds(10)) == 0, "\(p.stderr)")
        #expect(p.stderr.contains("replay \(file):4: warning: the last line is cut short"), "\(p.stderr)")
    }

    /// `--record` with stdin lines: the states sent are in the file, and it replays.
    @Test func recordingWorksForStdinToo() throws {
        let dir = try Directory()
        let file = "\(dir.path)/stdin.jsonl"
        let r = try ClassroomReceiver([])
        let c = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(r.port)", "--input", "stdin", "--record", file],
                                 stdin: true)
        c.write("0 none\n0.3 forward+a\n")
        #expect(r.waitForMap(timeout: .seconds(10), Self.moving))
        c.write("0 none\n")
        c.closeStdin()
        #expect(c.wait(timeout: .seconds(10)) == 0, "\(c.stderr)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.first?.contains(#""input":"stdin""#) == true)
        #expect(lines.contains { $0.contains(#""e":"state","angle":0.3,"buttons":5"#) }, "\(lines.prefix(5))")
        #expect(lines.last?.contains(#""reason":"end of input""#) == true)
        let plot = try ChildProcess(analogRemote: ["plot", file, "-o", "\(dir.path)/stdin.svg"])
        #expect(plot.wait() == 0, "\(plot.stderr)")
        #expect(try String(contentsOfFile: "\(dir.path)/stdin.svg", encoding: .utf8).contains("tilt (degrees"))
    }

    /// A failsafe on a receiver with --black-box leaves a file whose plot shows the last states
    /// and the failsafe; SIGUSR1 and exit write one too.
    @Test func aFailsafeLeavesABlackBoxThatPlotShows() throws {
        let dir = try Directory()
        let box = "\(dir.path)/box"
        let r = try ClassroomReceiver(["--black-box", box, "--failsafe-ms", "250"])
        let c = try ClassroomPeer(port: r.port)
        try c.send(.neutral)
        for _ in 0..<10 {
            try c.send(ControllerState(angle: 0.5, buttons: .forward))
            usleep(20_000)
        }
        #expect(r.waitForMap(Self.moving))
        // Silence: the failsafe trips and the black box is written.
        let written = r.process.waitForOutput(timeout: .seconds(10)) { _, _ in Self.files(box).contains { $0.hasSuffix("-failsafe.jsonl") } }
        #expect(written, "no black box after the failsafe: \(Self.files(box)) \(r.process.stderr)")
        guard let name = Self.files(box).first(where: { $0.hasSuffix("-failsafe.jsonl") }) else { return }
        let text = try String(contentsOfFile: "\(box)/\(name)", encoding: .utf8)
        #expect(text.hasPrefix(#"{"format":"analog-remote-recording","version":1,"kind":"black-box""#))
        #expect(text.contains(#""e":"state","angle":0.5,"buttons":1"#))
        #expect(text.contains(#""e":"failsafe","cause":"silence""#))
        #expect(text.contains(#"[34,0],[35,0]]}"#), "the motors stopped: \(text)")
        let svg = "\(dir.path)/box.svg"
        let plot = try ChildProcess(analogRemote: ["plot", "\(box)/\(name)", "-o", svg])
        #expect(plot.wait() == 0, "\(plot.stderr)")
        let picture = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(picture.contains("failsafe (silence) @ "))
        #expect(picture.contains(">forward<"))

        r.process.signal(SIGUSR1)
        #expect(r.process.waitForOutput(timeout: .seconds(10)) { _, _ in Self.files(box).contains { $0.hasSuffix("-sigusr1.jsonl") } })
        _ = try r.stop()
        #expect(Self.files(box).contains { $0.hasSuffix("-exit.jsonl") }, "\(Self.files(box))")
    }

    static func files(_ dir: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }
}
