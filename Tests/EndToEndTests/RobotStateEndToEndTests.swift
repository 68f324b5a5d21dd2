import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// A real `control --input stdin --log-format json` against a real `receive`: every state the
/// driver can be told (Protocol.md §7.9) shows up in the controller's JSON log, in the order the
/// receiver went through them. The receiver sends each report in the loop turn that changed it
/// (RobotStateReporterTests pin that with a manual clock); here we assert arrival and order,
/// and never sleep to wait for a state.
@Suite(.serialized) struct RobotStateEndToEndTests {
    /// A controller whose JSON log lines with `robot_state` are read back.
    final class Driver {
        let process: ChildProcess

        init(port: UInt16, _ extra: [String] = []) throws {
            process = try ChildProcess(analogRemote: ["control", "--quiet", "--log-format", "json", "--input", "stdin",
                                                      "--peer", "127.0.0.1:\(port)"] + extra, stdin: true)
        }

        /// Every `robot_state` log record so far, oldest first.
        var states: [[String: String]] { Self.records(process.stderr) }

        static func records(_ text: String) -> [[String: String]] {
            text.split(separator: "\n").compactMap { line in
                guard line.hasPrefix("{"), let data = line.data(using: .utf8),
                      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                      object["robot_state"] != nil else { return nil }
                return object.compactMapValues { $0 as? String }
            }
        }

        /// Waits until a record after index `after` matches; returns its index.
        @discardableResult
        func waitFor(_ state: String, cause: String? = nil, after: Int = -1, timeout: Duration = .seconds(10)) throws -> Int {
            var found: Int?
            _ = process.waitForOutput(timeout: timeout) { _, err in
                let all = Self.records(err)
                found = all.indices.first { i in
                    i > after && all[i]["robot_state"] == state && (cause == nil || all[i]["cause"] == cause)
                }
                return found != nil
            }
            guard let found else {
                throw ClassroomTestError("no robot_state=\(state)\(cause.map { " cause=\($0)" } ?? "") after #\(after): \(process.stderr.suffix(1500))")
            }
            return found
        }

        func stop() -> Int32? {
            process.closeStdin()
            return process.wait(timeout: .seconds(10))
        }
    }

    @Test func drivingIsToldWithTheBoard() throws {
        let r = try ClassroomReceiver([])
        defer { _ = try? r.stop() }
        let d = try Driver(port: r.port, ["--name", "Ann"])
        d.process.write("0 none\n")
        let i = try d.waitFor("driving")
        // The board as the receiver probed it (the built-in simulated board runs the motors firmware).
        #expect(d.states[i]["board"] == "motors profile, motors firmware 1.1, 36-byte map")
        #expect(d.states[i]["message"] == "robot: DRIVING")
        #expect(d.stop() == 0)
    }

    /// Under `--accept secret` the report travels sealed like every other datagram (Protocol.md §8.3).
    @Test func theAuthenticatedModeTellsTheStateToo() throws {
        let words = "acorn actor adult agent alarm album alley amber angle ankle apple apron"
        let r = try ClassroomReceiver(["--accept", "secret", "--secret", words])
        defer { _ = try? r.stop() }
        let d = try Driver(port: r.port, ["--secret", words])
        d.process.write("0 none\n")
        try d.waitFor("driving")
        #expect(d.stop() == 0)
    }

    @Test func anotherDriverIsToldWhoOwnsTheRobot() throws {
        let r = try ClassroomReceiver([])
        defer { _ = try? r.stop() }
        let ann = try Driver(port: r.port, ["--name", "Ann"])
        ann.process.write("0 none\n")
        try ann.waitFor("driving")
        let bob = try Driver(port: r.port, ["--name", "Bob"])
        bob.process.write("0 forward\n")
        let i = try bob.waitFor("owned")
        #expect(bob.states[i]["text"] == "Ann")
        #expect(bob.states[i]["message"] == "robot: OWNED BY Ann")
        #expect(!bob.states.contains { $0["robot_state"] == "driving" }, "Bob never drove")
        // Ann leaves (bye at EOF): Bob's states take the robot, after a resting one.
        #expect(ann.stop() == 0)
        let j = try bob.waitFor("failsafe", after: i)
        #expect(["startup", "released"].contains(bob.states[j]["cause"] ?? ""), "\(bob.states[j])")
        bob.process.write("0 none\n")
        try bob.waitFor("driving", after: j)
        #expect(bob.stop() == 0)
    }

    @Test func aRefusedDriverIsToldWhyAndExitsOne() throws {
        let r = try ClassroomReceiver(["--accept", "paired", "--pairing-code", "4711"])
        defer { _ = try? r.stop() }
        let d = try Driver(port: r.port, ["--pair", "1111"])
        let i = try d.waitFor("refused")
        #expect(d.states[i]["reason"] == "2")
        #expect(d.states[i]["text"]?.contains("wrong pairing code") == true)
        #expect(d.process.wait(timeout: .seconds(10)) == 1, "a deny ends the controller with status 1")
    }

    @Test func failsafeOnSilenceIsToldThenDrivingAfterARestingState() throws {
        // The controller resends once a second; the receiver's failsafe is 100 ms: every resend
        // gap is a silence the driver must be told about.
        let r = try ClassroomReceiver(["--failsafe-ms", "100"])
        defer { _ = try? r.stop() }
        let d = try Driver(port: r.port, ["--rate", "1"])
        d.process.write("0 none\n")
        let i = try d.waitFor("driving")
        let j = try d.waitFor("failsafe", cause: "silence", after: i)
        #expect(d.states[j]["message"] == "robot: FAILSAFE (silence): centre to resume")
        #expect(d.states[j]["level"] == "warning")
        // A moving state is held (still failsafe), a resting one drives again.
        d.process.write("0 forward\n")
        d.process.write("0 none\n")
        try d.waitFor("driving", after: j)
        #expect(d.stop() == 0)
    }

    @Test func teacherStopAndReleaseAreTold() throws {
        let r = try ClassroomReceiver(["--session", "class-3b"])
        defer { _ = try? r.stop() }
        let d = try Driver(port: r.port)
        d.process.write("0 none\n")
        let i = try d.waitFor("driving")
        let stop = try ChildProcess(analogRemote: ["stop-all", "--quiet", "--session", "class-3b", "--peer", "127.0.0.1:\(r.port)"])
        #expect(stop.wait(timeout: .seconds(10)) == 0, "\(stop.stderr)")
        let j = try d.waitFor("teacher-stop", after: i)
        #expect(d.states[j]["message"] == "robot: STOPPED BY TEACHER")
        let release = try ChildProcess(analogRemote: ["stop-all", "--quiet", "--session", "class-3b", "--release",
                                                      "--peer", "127.0.0.1:\(r.port)"])
        #expect(release.wait(timeout: .seconds(10)) == 0, "\(release.stderr)")
        d.process.write("0 forward\n")
        let k = try d.waitFor("failsafe", cause: "teacher-release", after: j)
        d.process.write("0 none\n")
        try d.waitFor("driving", after: k)
        #expect(d.stop() == 0)
    }

    @Test func aMissingBoardIsToldAndItsReturn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("robot-state-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let link = dir.appendingPathComponent("board").path
        var sim = try ChildProcess(analogRemote: ["board-sim", "--quiet", "--link", link])
        defer { sim.stop() }
        #expect(sim.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "serial:\(link)"])
        defer { receiver.signal(SIGTERM); _ = receiver.wait() }
        let port = try ClassroomReceiver.port(of: receiver, what: "receiver")
        let d = try Driver(port: port)
        d.process.write("0 none\n")
        let i = try d.waitFor("driving")
        #expect(d.states[i]["board"] == "stock profile, stock firmware 1.1, 34-byte map", "board-sim runs the stock firmware")
        sim.signal(SIGTERM)
        #expect(sim.wait(timeout: .seconds(10)) == 0)
        let j = try d.waitFor("board-missing", after: i)
        #expect(d.states[j]["text"]?.isEmpty == false)
        #expect(d.states[j]["message"]?.hasPrefix("robot: BOARD MISSING") == true)
        sim = try ChildProcess(analogRemote: ["board-sim", "--quiet", "--link", link])
        #expect(sim.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        // Back: the receiver waits for a resting state (board link), which the controller's resends give.
        let k = try d.waitFor("failsafe", cause: "board-link", after: j, timeout: .seconds(20))
        try d.waitFor("driving", after: k)
        #expect(d.stop() == 0)
    }

    /// Something listens but never answers (a firewall, a receiver that predates control
    /// messages): after 2 s the controller says so, and it ends non-zero when its input ends.
    @Test func aSilentPeerIsToldAfterTwoSecondsAndEndsNonZero() throws {
        let silent = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { silent.close() }
        let port = try silent.localAddress().port
        let d = try Driver(port: port)
        d.process.write("0 none\n")
        let i = try d.waitFor("no-answer")
        #expect(d.states[i]["message"]?.hasPrefix("no answer from 127.0.0.1:\(port) for 2 s") == true, "\(d.states[i])")
        #expect(d.stop() == 4)
        #expect(d.process.stderr.hasSuffix("analog-remote: no answer from 127.0.0.1:\(port): no receiver answered (is it running, and on that port? an older receiver needs --plain)\n"))
    }

    /// Nothing listens: the controller says so at once (ECONNREFUSED on its connected socket),
    /// keeps reading its input, and ends non-zero with one line when the input ends.
    @Test func aDeadPortIsToldAtOnceAndEndsNonZeroAtEOF() throws {
        let idle = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        let port = try idle.localAddress().port
        idle.close()   // now nothing listens there
        let d = try Driver(port: port)
        d.process.write("0 none\n")
        try d.waitFor("no-receiver", timeout: .seconds(5))
        #expect(d.stop() == 4)
        let last = d.process.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last == "analog-remote: no receiver at 127.0.0.1:\(port): nothing listened on that UDP port (check the receiver's `receiving on udp port N` line, or use --session)")
    }
}
