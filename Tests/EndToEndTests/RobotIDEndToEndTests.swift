import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// Issue 25, item 6, through the binaries: robots cloned from one image share a display name
/// (the host name), never a robot id. `stop-all --robot ID` stops that robot alone, a command
/// aimed at one robot's id is refused by its clone, the id outlives a restart, and a state
/// directory that cannot be written costs one warning line, not the robot.
@Suite(.serialized) struct RobotIDEndToEndTests {
    static let forwardA = ControllerState(angle: 0, buttons: [.forward, .a])

    static func stateDir() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-robot-id-\(UUID().uuidString)").path
    }

    static func robotID(in dir: String) throws -> RobotID {
        let text = try String(contentsOfFile: dir + "/robot-id", encoding: .utf8)
        return try #require(RobotID(text.trimmingCharacters(in: .whitespacesAndNewlines)), "robot-id holds \(text.debugDescription)")
    }

    func stopAll(ports: [UInt16], robot: RobotID?, key: String = "clone-teacher-key") throws -> ChildProcess {
        var args = ["stop-all", "--quiet", "--session", "class-3b", "--teacher-key", key]
        for p in ports { args += ["--peer", "127.0.0.1:\(p)"] }
        if let robot { args += ["--robot", robot.text] }
        return try ChildProcess(analogRemote: args)
    }

    @Test func twoClonesWithOneNameAStopAllAimedAtOneIdStopsThatOneOnly() throws {
        let dirs = [Self.stateDir(), Self.stateDir()]
        defer { for d in dirs { try? FileManager.default.removeItem(atPath: d) } }
        let clones = try dirs.map {
            try ClassroomReceiver(["--session", "class-3b", "--name", "robot", "--teacher-key", "clone-teacher-key",
                                   "--failsafe-ms", "5000", "--state-dir", $0])
        }
        let ids = try dirs.map(Self.robotID(in:))
        #expect(ids[0] != ids[1], "two robots made the same id")
        let drivers = try clones.map { try ClassroomPeer(port: $0.port) }
        for d in drivers { try d.send(.neutral); try d.send(Self.forwardA) }
        let drivingMap = ClassroomReceiver.kitMap(left: 0xC0, right: 0x40, led1: 255)
        for c in clones { #expect(c.waitForMap { $0 == drivingMap }) }

        // Aimed at the second clone, sent to both: only it stops; the first is left alone.
        let stop = try stopAll(ports: clones.map(\.port), robot: ids[1])
        #expect(stop.wait() == 0, "\(stop.stdout) \(stop.stderr)")
        #expect(stop.stdout == "stopped \"robot\" 127.0.0.1:\(clones[1].port)\nreached 1 of 1 receiver\n", "\(stop.stdout)")
        #expect(clones[1].waitForMap { $0 == ClassroomReceiver.kitMap() }, "the aimed-at clone did not stop")
        try drivers[0].send(ControllerState(angle: 0, buttons: .forward))
        #expect(clones[0].waitForMap { $0 == ClassroomReceiver.forwardMap }, "the other clone stopped driving")
        #expect(!clones[0].process.stderr.contains("STOPPED BY TEACHER"))

        // The signed command for the second clone, captured and replayed to the first: refused,
        // although both carry the display name "robot".
        var command = ControlMessage.StopAll(action: .stop, unixMillis: WallClock.unixMillis(), nonce: .random(in: 1...UInt64.max),
                                             session: "class-3b", target: WireText(ids[1].target))
        command.sign(key: try TeacherKey(text: "clone-teacher-key").macKey)
        let attacker = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { attacker.close() }
        let datagram = ControlDatagram(header: ControlHeader(type: .stopAll, connection: 7),
                                       payload: ControlMessage.stopAll(command).encodePayload()[...]).encode()
        _ = try attacker.send(datagram, to: try SocketAddress.resolve("127.0.0.1:\(clones[0].port)"))
        var buffer = [UInt8](repeating: 0, count: 2048)
        let (length, _) = try #require(try attacker.receive(into: &buffer, timeout: .seconds(5)), "the first clone did not answer")
        let d = try ControlDatagram.decode(Array(buffer[..<length]))
        guard case .stopAllReply(let answer) = try ControlMessage.decode(type: d.header.type, payload: d.payload) else {
            Issue.record("not a stop-all reply: \(d.header.type)")
            return
        }
        #expect(answer.outcome == .refused, "\(answer)")
        #expect(answer.text == "stop-all for robot id \(ids[1]), this is robot id \(ids[0]) (\"robot\")", "\(answer.text)")
        try drivers[0].send(Self.forwardA)
        #expect(clones[0].waitForMap { $0 == drivingMap }, "the replay stopped the other clone")
        for c in clones { _ = try c.stop() }
    }

    @Test func theRobotIDOutlivesARestartAndStopAllFindsItAgain() throws {
        let dir = Self.stateDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try ClassroomReceiver(["--session", "class-3b", "--teacher-key", "clone-teacher-key", "--state-dir", dir])
        let id = try Self.robotID(in: dir)
        _ = try first.stop()

        let again = try ClassroomReceiver(["--session", "class-3b", "--teacher-key", "clone-teacher-key", "--state-dir", dir])
        #expect(try Self.robotID(in: dir) == id)
        let stop = try stopAll(ports: [again.port], robot: id)
        #expect(stop.wait() == 0, "\(stop.stdout) \(stop.stderr)")
        #expect(stop.stdout.hasSuffix("reached 1 of 1 receiver\n"), "\(stop.stdout)")
        #expect(again.process.waitForOutput { _, err in err.contains("STOPPED BY TEACHER") })

        // Another id: nobody of that id answers, the command goes to nobody, exit 1, said so.
        var rng = SystemRandomNumberGenerator()
        var other = RobotID.random(using: &rng)
        while other == id { other = RobotID.random(using: &rng) }
        let miss = try stopAll(ports: [again.port], robot: other)
        #expect(miss.wait() == 1)
        #expect(miss.stderr.contains("no receiver with robot id \(other) in session \"class-3b\""), "\(miss.stdout) \(miss.stderr)")
        _ = try again.stop()
    }

    @Test func aStateDirectoryThatCannotBeWrittenIsOneClearLineAndTheRobotRuns() throws {
        // A regular file where a directory should be: not even root can write under it.
        let file = Self.stateDir()
        _ = FileManager.default.createFile(atPath: file, contents: Data("not a directory\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = try ClassroomReceiver(["--session", "class-3b", "--state-dir", file + "/state"])
        let c = try ClassroomPeer(port: r.port)
        try c.send(.neutral)
        try c.send(Self.forwardA)
        #expect(r.waitForMap { $0 == ClassroomReceiver.kitMap(left: 0xC0, right: 0x40, led1: 255) })
        let warnings = r.process.stderr.split(separator: "\n").filter { $0.hasPrefix("analog-remote: warning: ") }
        #expect(warnings.count == 1, "\(r.process.stderr)")
        let line = String(warnings.first ?? "")
        #expect(line.hasPrefix("analog-remote: warning: cannot keep the robot id in \(file)/state: "), "\(line)")
        #expect(line.contains("is for this run only (give --state-dir a directory this user may write)"), "\(line)")
        // The id of this run is the one it answers to.
        let marker = try #require(line.range(of: ": robot id "), "\(line)")
        let id = try #require(RobotID(line[marker.upperBound...].prefix(RobotID.length)), "\(line)")
        let args = ["stop-all", "--quiet", "--session", "class-3b", "--peer", "127.0.0.1:\(r.port)", "--robot", id.text]
        let stop = try ChildProcess(analogRemote: args)
        #expect(stop.wait() == 0, "\(stop.stdout) \(stop.stderr)")
        _ = try r.stop()
    }
}
