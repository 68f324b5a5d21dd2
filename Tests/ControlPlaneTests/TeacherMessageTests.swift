import BoardProtocol
import ControlWire
import Crypto
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
        /// A report's sensor block: sensor1–sensor4, switch, temperature, humidity; absent: none.
        let sensors: [Int]?
    }
    struct Rejected: Decodable { let name, hex: String }
    /// Reports that decode but that a dashboard refuses (§7.12): `signed_for`, when present, is
    /// the watch nonce the MAC is right for (not the vectors' watch).
    struct Unverified: Decodable {
        let name, hex: String
        let signedFor: UInt64?
        enum CodingKeys: String, CodingKey { case name, hex, signedFor = "signed_for" }
    }
    let key, session: String
    let time, nonce: UInt64
    let messages: [Message]
    let rejected: [Rejected]
    let unverified: [Unverified]

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
                #expect(c.action.rawValue == v.action && c.target.text == v.target && c.argument.text == v.argument, "\(v.name)")
                #expect(c.session.text == file.session && c.unixMillis == file.time && c.nonce == file.nonce)
                #expect(c.verify(key: Array(file.key.utf8)), "\(v.name): MAC")
                #expect(!c.verify(key: Array("wrong".utf8)), "\(v.name): MAC under another key")
                actions.insert(c.action.rawValue)
            case .teacherReply(let r):
                #expect(r.action.rawValue == v.action && r.outcome.rawValue == v.outcome, "\(v.name)")
                // A signed reply (§7.11) checks out under the vector key only; an unsigned one never.
                #expect(r.verify(key: Array(file.key.utf8)) == v.name.contains("signed"), "\(v.name): MAC")
                #expect(!r.verify(key: Array("wrong".utf8)), "\(v.name): MAC under another key")
            case .watchReport(let r):
                #expect(r.state.code == v.state && r.driver.text == v.driver, "\(v.name)")
                let sensors: [Int]? = r.sensors.map { (b: SensorBlock) -> [Int] in
                    let tail: [Int] = [Int(b.switchValue), Int(b.temperature), Int(b.humidity)]
                    return b.sensors.map { Int($0) } + tail
                }
                #expect(sensors == v.sensors, "\(v.name): sensors")
                if case .failsafe(let cause) = r.state { #expect(cause.rawValue == v.detail) }
                // Signed for the vectors' watch (its nonce), as an independent HMAC computes it,
                // and exactly what the encoder signs; under another nonce or key it fails.
                #expect(Self.independentMAC(d.payload, key: file.key, watchNonce: file.nonce) == Array(d.payload.suffix(16)), "\(v.name): MAC")
                var resigned = r
                resigned.mac = []
                resigned.sign(key: Array(file.key.utf8), watchNonce: file.nonce)
                #expect(Hex.string(ControlDatagram(header: d.header, payload: ControlMessage.watchReport(resigned).encodePayload()[...]).encode()) == v.hex,
                        "\(v.name): the encoder signs other bytes")
                #expect(r.verify(key: Array(file.key.utf8), watchNonce: file.nonce), "\(v.name)")
                #expect(WatchReport.verify(payload: d.payload, key: Array(file.key.utf8), watchNonce: file.nonce), "\(v.name)")
                #expect(!WatchReport.verify(payload: d.payload, key: Array(file.key.utf8), watchNonce: file.nonce + 1), "\(v.name): another watch")
                #expect(!WatchReport.verify(payload: d.payload, key: Array("wrong".utf8), watchNonce: file.nonce), "\(v.name): another key")
            case .deny(let deny):
                #expect(deny.reason.rawValue == v.reason && deny.reason == .kicked, "\(v.name)")
            default:
                Issue.record("\(v.name): unexpected \(message.type)")
            }
        }
        #expect(actions == Set(TeacherCommand.Action.allCases.map(\.rawValue)), "every action has a vector")
    }

    /// HMAC-SHA256 straight from swift-crypto over "AR watch report" ‖ nonce ‖ the row bytes,
    /// cut to 16 bytes: the MAC of §7.12 computed without the code under test.
    static func independentMAC(_ payload: ArraySlice<UInt8>, key: String, watchNonce: UInt64) -> [UInt8] {
        let nonce = (0..<8).map { UInt8(truncatingIfNeeded: watchNonce >> (56 - 8 * $0)) }
        let input = Array("AR watch report".utf8) + nonce + Array(payload.dropLast(16))
        return Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Array(key.utf8)))).prefix(16).map { $0 }
    }

    /// Reports that decode but must not reach a row: none verifies for the vectors' watch under
    /// the vector key; the one signed for another watch nonce is a right MAC for that nonce.
    @Test func unverifiedReportVectorsFailTheirMAC() throws {
        let file = try TeacherVectors.load()
        let spec = try String(contentsOf: Paths.repositoryFile("Protocol.md"), encoding: .utf8)
        #expect(file.unverified.count >= 3)
        for v in file.unverified {
            #expect(spec.contains(v.hex), "Protocol.md lacks the refused \(v.name)")
            let (d, message) = try decode(v.hex)
            guard case .watchReport(let r) = message else { Issue.record("\(v.name): not a report"); continue }
            #expect(!WatchReport.verify(payload: d.payload, key: Array(file.key.utf8), watchNonce: file.nonce), "\(v.name)")
            #expect(!r.verify(key: Array(file.key.utf8), watchNonce: file.nonce), "\(v.name)")
            #expect(Self.independentMAC(d.payload, key: file.key, watchNonce: file.nonce) != Array(d.payload.suffix(16)), "\(v.name)")
            var gate = WatchReportGate()
            gate.sent(watch: file.nonce, now: .now)
            #expect(gate.check(payload: d.payload, serial: r.serial, key: Array(file.key.utf8), now: .now) == .unverified, "\(v.name)")
            if let other = v.signedFor {
                #expect(Self.independentMAC(d.payload, key: file.key, watchNonce: other) == Array(d.payload.suffix(16)), "\(v.name)")
            }
        }
    }

    /// A receiver with a teacher key signs each report for the watch nonce it is given; one
    /// without a key sends none.
    @Test func controlPlaneSignsReports() throws {
        var settings = ClassroomSettings()
        settings.session = "class-3b"; settings.displayName = "robot-1"; settings.teacherKey = TeacherKey(macKey: Array("teacher-secret".utf8))
        var plane = ControlPlane<Int>(settings: settings, connection: 1, oneShotConnection: 2)
        let report = WatchReport(serial: 3, uptimeSeconds: 60, state: .free, robotID: 5, name: "robot-1")
        let out = plane.watchReport(report, watchNonce: 0xABCD, to: 7)
        let (to, bytes) = try #require(out.datagrams.first)
        let d = try ControlDatagram.decode(bytes)
        guard case .watchReport(let r) = try ControlMessage.decode(type: d.header.type, payload: d.payload) else {
            Issue.record("no watch-report"); return
        }
        #expect(to == 7 && r.serial == 3 && d.header.connectionID == 0 && d.header.sequence == 0)
        #expect(Self.independentMAC(d.payload, key: "teacher-secret", watchNonce: 0xABCD) == Array(d.payload.suffix(16)))
        #expect(!r.verify(key: Array("teacher-secret".utf8), watchNonce: 0xABCE))

        settings.teacherKey = nil
        var open = ControlPlane<Int>(settings: settings, connection: 1, oneShotConnection: 2)
        #expect(open.watchReport(report, watchNonce: 0xABCD, to: 7).datagrams.isEmpty, "a receiver without a key signs nothing")
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
            var c = TeacherCommand(action: action, unixMillis: millis, nonce: nonce, session: WireText(session), target: WireText(target))
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
