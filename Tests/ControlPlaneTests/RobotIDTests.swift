import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import TestSupport
import Testing

/// vectors/control-messages.json `robot_ids` (Protocol.md §7.6.1), and what a receiver does with
/// a stop-all aimed at a robot id.
struct RobotIDVectors: Decodable {
    struct Valid: Decodable { let text, value: String }
    struct Target: Decodable { let target: String; let robot: String? }
    let valid: [Valid]
    let typed: [Valid]
    let invalid: [String]
    let targets: [Target]

    static func load() throws -> RobotIDVectors {
        struct File: Decodable { let robot_ids: RobotIDVectors }
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: Paths.repositoryFile("vectors/control-messages.json"))).robot_ids
    }
}

@Suite struct RobotIDTests {
    @Test func vectors() throws {
        let file = try RobotIDVectors.load()
        for v in file.valid {
            let value = try #require(UInt64(v.value, radix: 16))
            let id = try #require(RobotID(v.text), "\(v.text)")
            #expect(id.value == value && id.text == v.text, "\(v.text)")
            #expect(RobotID(value: value) == id)
            #expect(RobotID(target: "id:" + v.text) == id && id.target == "id:" + v.text)
        }
        for v in file.typed {
            #expect(RobotID(v.text)?.value == UInt64(v.value, radix: 16), "\(v.text): people may type upper case")
        }
        for text in file.invalid { #expect(RobotID(text) == nil, "\(text)") }
        for t in file.targets { #expect(RobotID(target: t.target)?.text == t.robot, "\(t.target)") }
        #expect(RobotID(value: 0) == nil && RobotID(value: 1 << 40) == nil)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let id = RobotID.random(using: &rng)
            #expect(RobotID(id.text) == id)
        }
    }

    /// A stop-all aimed at an id is taken by that robot only — never matched against a display
    /// name, so two clones called "robot" take only their own; a name target still works.
    @Test func aStopAllAimedAtAnIdIsTakenByThatRobotAlone() throws {
        let mine = try #require(RobotID("k3m9x2ab")), clone = try #require(RobotID("k3m9x2ac"))
        func command(_ target: String, nonce: UInt64) -> ControlMessage.StopAll {
            ControlMessage.StopAll(action: .stop, unixMillis: 1_000_000, nonce: nonce, session: "s", target: WireText(target))
        }
        var robot = StopAllGuard(session: "s", instance: "robot", robotID: mine, teacherKey: nil)
        #expect(robot.consider(command("id:k3m9x2ac", nonce: 1), nowUnixMillis: 1_000_000)
                == .refused("stop-all for robot id k3m9x2ac, this is robot id k3m9x2ab (\"robot\")"))
        var twin = StopAllGuard(session: "s", instance: "robot", robotID: clone, teacherKey: nil)
        #expect(twin.consider(command("id:k3m9x2ab", nonce: 2), nowUnixMillis: 1_000_000)
                == .refused("stop-all for robot id k3m9x2ab, this is robot id k3m9x2ac (\"robot\")"))
        var old = StopAllGuard(session: "s", instance: "id:k3m9x2ab", teacherKey: nil)
        #expect(old.consider(command("id:k3m9x2ab", nonce: 3), nowUnixMillis: 1_000_000)
                == .refused("stop-all for robot id k3m9x2ab, this is a receiver without a robot id (\"id:k3m9x2ab\")"),
                "the id form is never taken as a display name")
        #expect(robot.consider(command("id:k3m9x2ab", nonce: 4), nowUnixMillis: 1_000_000) == .take(stop: true))
        #expect(robot.consider(command("robot", nonce: 5), nowUnixMillis: 1_000_001) == .take(stop: true))
        #expect(robot.consider(command("", nonce: 6), nowUnixMillis: 1_000_002) == .take(stop: true))
    }

    /// Every stopped/released reply names the robot's id target; a refusal does not.
    @Test func theReplyNamesTheRobotID() throws {
        var settings = ClassroomSettings()
        settings.session = "s"; settings.displayName = "robot"; settings.robotID = RobotID("k3m9x2ab")
        settings.teacherKey = TeacherKey(macKey: Array("teacher-secret".utf8))
        var plane = ControlPlane<Int>(settings: settings, connection: 1, oneShotConnection: 2)
        func reply(_ s: ControlMessage.StopAll) throws -> ControlMessage.StopAllReply {
            let datagram = ControlDatagram(header: ControlHeader(type: .stopAll, connection: 9), payload: ControlMessage.stopAll(s).encodePayload()[...]).encode()
            let out = plane.control(datagram, from: 7, now: .now, unixMillis: 1_000_000)
            let d = try ControlDatagram.decode(try #require(out.datagrams.first).1)
            guard case .stopAllReply(let r) = try ControlMessage.decode(type: d.header.type, payload: d.payload) else { throw CancellationError() }
            return r
        }
        let query = try reply(.init(action: .query, unixMillis: 1_000_000, nonce: 1, session: "s"))
        #expect(query.text == "id:k3m9x2ab" && query.robotID == RobotID("k3m9x2ab"))
        var stop = ControlMessage.StopAll(action: .stop, unixMillis: 1_000_000, nonce: 2, session: "s", target: "id:k3m9x2ab")
        stop.sign(key: Array("teacher-secret".utf8))
        let stopped = try reply(stop)
        #expect(stopped.outcome == .stopped && stopped.robotID == RobotID("k3m9x2ab"))
        #expect(stopped.verify(key: Array("teacher-secret".utf8)))
        let refused = try reply(.init(action: .stop, unixMillis: 1_000_000, nonce: 3, session: "other"))
        #expect(refused.outcome == .refused && refused.robotID == nil)
    }
}
