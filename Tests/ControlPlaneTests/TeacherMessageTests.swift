import Foundation
import ControlPlane
import RemoteWire
import TestSupport
import Testing

/// vectors/teacher-messages.json (Protocol.md §7.10–§7.12): the dashboard's messages.
struct TeacherVectors: Decodable {
    struct Message: Decodable {
        let name, hex, kind: String
        let action, outcome, state, detail, reason: UInt8?
        let target, argument, driver: String?
    }
    struct Rejected: Decodable { let name, hex: String }
    let key, session: String
    let time, nonce: UInt64
    let messages: [Message]
    let rejected: [Rejected]

    static func load() throws -> TeacherVectors {
        try JSONDecoder().decode(TeacherVectors.self, from: Data(contentsOf: Paths.repositoryFile("vectors/teacher-messages.json")))
    }
}

@Suite struct TeacherMessageTests {
    func decode(_ hex: String) throws -> (ControlDatagram, ControlMessage) {
        let d = try ControlDatagram.decode(try #require(Hex.bytes(hex)))
        return (d, try ControlMessage.decode(type: d.header.type, payload: d.payload))
    }

    /// Each vector decodes to its fields, re-encodes to the same bytes, is in Protocol.md; the
    /// commands' MACs check out under the vector key and not under another.
    @Test func vectorsRoundTrip() throws {
        let file = try TeacherVectors.load()
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        var actions = Set<UInt8>()
        for v in file.messages {
            #expect(spec.contains(v.hex), "Protocol.md lacks \(v.name)")
            let (d, message) = try decode(v.hex)
            let again = ControlDatagram(header: d.header, payload: message.encodePayload()[...]).encode()
            #expect(Hex.string(again) == v.hex, "\(v.name)")
            switch message {
            case .teacher(let c):
                #expect(c.action.rawValue == v.action && c.target == v.target && c.argument == v.argument, "\(v.name)")
                #expect(c.session == file.session && c.unixMillis == file.time && c.nonce == file.nonce)
                #expect(c.verify(key: Array(file.key.utf8)), "\(v.name): MAC")
                #expect(!c.verify(key: Array("wrong".utf8)), "\(v.name): MAC under another key")
                actions.insert(c.action.rawValue)
            case .teacherReply(let r):
                #expect(r.action.rawValue == v.action && r.outcome.rawValue == v.outcome, "\(v.name)")
                // A signed reply (§7.11) checks out under the vector key only; an unsigned one never.
                #expect(r.verify(key: Array(file.key.utf8)) == v.name.contains("signed"), "\(v.name): MAC")
                #expect(!r.verify(key: Array("wrong".utf8)), "\(v.name): MAC under another key")
            case .watchReport(let r):
                #expect(r.state.code == v.state && r.driver == v.driver, "\(v.name)")
                if case .failsafe(let cause) = r.state { #expect(cause.rawValue == v.detail) }
            case .deny(let deny):
                #expect(deny.reason.rawValue == v.reason && deny.reason == .kicked, "\(v.name)")
            default:
                Issue.record("\(v.name): unexpected \(message.type)")
            }
        }
        #expect(actions == Set(TeacherCommand.Action.allCases.map(\.rawValue)), "every action has a vector")
    }

    @Test func rejectedVectorsAreRefused() throws {
        let file = try TeacherVectors.load()
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        for v in file.rejected {
            #expect(spec.contains(v.hex), "Protocol.md lacks the refused \(v.name)")
            #expect(throws: ControlMessageError.self, "\(v.name)") { _ = try decode(v.hex) }
        }
    }

    /// A receiver signs nothing and checks everything: no key, another session, another
    /// receiver, a wrong key, a stale clock and a replayed nonce are each refused with a reason.
    @Test func guardRefusesWhatItShould() throws {
        let key = Array("teacher-secret".utf8)
        func command(_ action: TeacherCommand.Action = .watch, session: String = "class-3b", target: String = "robot-1",
                     at millis: UInt64 = 1_000_000, nonce: UInt64 = 7, key: [UInt8] = key) -> TeacherCommand {
            var c = TeacherCommand(action: action, unixMillis: millis, nonce: nonce, session: session, target: target)
            c.sign(key: key)
            return c
        }
        var open = TeacherGuard(session: "class-3b", instance: "robot-1", teacherKey: nil)
        #expect(open.refusal(command(), nowUnixMillis: 1_000_000) == TeacherGuard.noKey)

        var g = TeacherGuard(session: "class-3b", instance: "robot-1", teacherKey: key)
        #expect(g.refusal(command(session: "other"), nowUnixMillis: 1_000_000)?.contains("session") == true)
        #expect(g.refusal(command(target: "robot-2"), nowUnixMillis: 1_000_000)?.contains("robot-2") == true)
        #expect(g.refusal(command(key: Array("nope".utf8)), nowUnixMillis: 1_000_000)?.contains("wrong teacher key") == true)
        #expect(g.refusal(command(at: 1_000_000 + 31_000), nowUnixMillis: 1_000_000)?.contains("clock") == true)
        #expect(g.refusal(command(), nowUnixMillis: 1_000_000) == nil)
        #expect(g.refusal(command(), nowUnixMillis: 1_000_100)?.contains("replay") == true)
        // Two dashboards need not agree on time order: an older command with a fresh nonce passes.
        #expect(g.refusal(command(at: 999_000, nonce: 8), nowUnixMillis: 1_000_200) == nil)
        #expect(g.refusal(command(target: "", nonce: 9), nowUnixMillis: 1_000_200) == nil, "empty target: every receiver")
    }

    /// The control plane answers every teacher command and hands the service only those taken.
    @Test func controlPlaneAnswersAndHandsOver() throws {
        var settings = ClassroomSettings()
        settings.session = "class-3b"; settings.displayName = "robot-1"; settings.teacherKey = TeacherKey(macKey: Array("teacher-secret".utf8))
        var plane = ControlPlane<Int>(settings: settings, connection: 1, oneShotConnection: 2)
        var c = TeacherCommand(action: .identify, unixMillis: 5_000_000, nonce: 42, session: "class-3b", target: "robot-1")
        c.sign(key: Array("teacher-secret".utf8))
        let datagram = ControlDatagram(header: ControlHeader(type: .teacher, connection: 9), payload: ControlMessage.teacher(c).encodePayload()[...]).encode()
        let out = plane.control(datagram, from: 7, now: .now, unixMillis: 5_000_000)
        #expect(out.effects == [.teacherCommand(7, c)])
        let reply = try #require(out.datagrams.first)
        let d = try ControlDatagram.decode(reply.1)
        guard case .teacherReply(let r) = try ControlMessage.decode(type: d.header.type, payload: d.payload) else {
            Issue.record("no teacher-reply"); return
        }
        #expect(reply.0 == 7 && r.nonce == 42 && r.outcome == .done && r.displayName == "robot-1")
        // Signed with the teacher key (§7.11): a dashboard counts it as done; changed, it does not verify.
        #expect(r.verify(key: Array("teacher-secret".utf8)))
        var forged = r
        forged.nonce = 43
        #expect(!forged.verify(key: Array("teacher-secret".utf8)))
        // The same datagram again: refused (replay), answered, nothing handed over.
        let again = plane.control(datagram, from: 7, now: .now, unixMillis: 5_000_000)
        #expect(again.effects.count == 1 && again.datagrams.count == 1)
        if case .teacherRefused(_, .identify, let why) = again.effects.first { #expect(why.contains("replay")) } else { Issue.record("not refused") }
    }
}
