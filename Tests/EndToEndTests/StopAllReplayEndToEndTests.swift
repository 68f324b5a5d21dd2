import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// Issue 19, item 4, through the binaries: a classmate relays the teacher's `stop-all --peer`
/// traffic for robot-2 and replays the captured release to robot-1. Robot-2 is released as the
/// teacher asked; robot-1 refuses the replay (the command names robot-2's robot id) and stays stopped; a
/// second replay to robot-2 after it was stopped again is refused (its nonce was taken).
@Suite(.serialized) struct StopAllReplayEndToEndTests {
    @Test func aReleaseCapturedForOneRobotDoesNotReleaseAnother() throws {
        let one = try ClassroomReceiver(["--session", "class-3b", "--teacher-key", "class-3b-teacher-key", "--name", "robot-1"])
        let two = try ClassroomReceiver(["--session", "class-3b", "--teacher-key", "class-3b-teacher-key", "--name", "robot-2"])
        func stopAll(_ peers: [UInt16], release: Bool) throws -> ChildProcess {
            var args = ["stop-all", "--quiet", "--session", "class-3b", "--teacher-key", "class-3b-teacher-key"]
            for p in peers { args += ["--peer", "127.0.0.1:\(p)"] }
            if release { args.append("--release") }
            return try ChildProcess(analogRemote: args)
        }
        let stop = try stopAll([one.port, two.port], release: false)
        #expect(stop.wait() == 0, "\(stop.stdout)")

        // The relay: the teacher sends to it, it passes everything on to robot-2 and back, and
        // keeps a copy of every signed release.
        let relay = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { relay.close() }
        let twoAddress = try SocketAddress.resolve("127.0.0.1:\(two.port)")
        let release = try stopAll([try relay.localAddress().port], release: true)
        var teacher: SocketAddress?
        var captured: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let deadline = ContinuousClock.now + .seconds(10)
        while release.isRunning, ContinuousClock.now < deadline {
            guard let (length, from) = try relay.receive(into: &buffer, timeout: .milliseconds(50)) else { continue }
            let bytes = Array(buffer[..<min(length, buffer.count)])
            if from.port == two.port {
                if let teacher { _ = try relay.send(bytes, to: teacher) }
                continue
            }
            teacher = from
            if let d = try? ControlDatagram.decode(bytes), case .stopAll(let c)? = try? ControlMessage.decode(type: d.header.type, payload: d.payload),
               c.action == .release {
                captured.append(bytes)
            }
            _ = try relay.send(bytes, to: twoAddress)
        }
        #expect(release.wait() == 0, "\(release.stdout) \(release.stderr)")
        #expect(release.stdout.contains("released \"robot-2\""), "\(release.stdout)")
        let replay = try #require(captured.first, "no release passed the relay")
        #expect(two.process.waitForOutput { _, err in err.contains("released by the teacher") })

        // The replay to robot-1: refused, and it stays stopped.
        let attacker = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { attacker.close() }
        _ = try attacker.send(replay, to: try SocketAddress.resolve("127.0.0.1:\(one.port)"))
        guard let (length, _) = try attacker.receive(into: &buffer, timeout: .seconds(5)),
              let d = try? ControlDatagram.decode(Array(buffer[..<length])),
              case .stopAllReply(let answer)? = try? ControlMessage.decode(type: d.header.type, payload: d.payload) else {
            Issue.record("robot-1 did not answer the replay")
            return
        }
        #expect(answer.outcome == .refused && answer.displayName == "robot-1", "\(answer)")
        // The command names robot-2 by its robot id (Protocol.md §7.6.1), each robot has its own.
        func robotID(_ r: ClassroomReceiver) throws -> String {
            try String(contentsOfFile: try #require(r.stateDir) + "/robot-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(answer.text == "stop-all for robot id \(try robotID(two)), this is robot id \(try robotID(one)) (\"robot-1\")")
        #expect(one.process.waitForOutput { _, err in err.contains("stop-all refused") })
        #expect(!one.process.stderr.contains("released by the teacher"), "robot-1 was released by the replay")

        // Robot-2 stopped again; the same release replayed to it: its nonce was taken.
        let again = try stopAll([two.port], release: false)
        #expect(again.wait() == 0)
        _ = try attacker.send(replay, to: twoAddress)
        guard let (length2, _) = try attacker.receive(into: &buffer, timeout: .seconds(5)),
              let d2 = try? ControlDatagram.decode(Array(buffer[..<length2])),
              case .stopAllReply(let answer2)? = try? ControlMessage.decode(type: d2.header.type, payload: d2.payload) else {
            Issue.record("robot-2 did not answer the replay")
            return
        }
        #expect(answer2.outcome == .refused && answer2.text.text.contains("replay"), "\(answer2)")
        _ = try one.stop()
        _ = try two.stop()
    }
}
