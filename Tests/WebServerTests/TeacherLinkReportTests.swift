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

/// The dashboard's side of the watch reports (Protocol.md §7.12) over real UDP on loopback: a
/// row takes only reports signed for one of its own live watches of that robot; forged ones,
/// replays and reports made for another dashboard are counted and change nothing the teacher's
/// page shows (read as the page reads it: ``TeacherRows/json``).
@Suite(.serialized) struct TeacherLinkReportTests {
    /// A keygen key: no scrypt to wait for in a debug build.
    static let keyText = "ark1-" + String(repeating: "5a", count: 32)
    static let macKey = try! TeacherKey(text: keyText).macKey
    static let otherKey = try! TeacherKey(text: "ark1-" + String(repeating: "a5", count: 32)).macKey

    /// One in-process dashboard link (as `web --teacher-key-file` runs it) watching the robots at
    /// `ports` on 127.0.0.1, with a dashboard open for as long as it runs.
    final class Dashboard {
        let hub: PhoneHub
        let link: TeacherLink
        final class Flag: Sendable { let raised = Atomic<Bool>(false) }
        let closed = Flag()

        init(ports: [UInt16], onProven: (@Sendable ([(address: SocketAddress, robot: RobotID?)]) -> Void)? = nil) throws {
            hub = PhoneHub(settings: .init(session: "AnalogRemote"), logger: Logger(label: "test"))
            hub.setRobots(try ports.enumerated().map { i, port in
                let address = try SocketAddress.resolve(host: "127.0.0.1", port: port)[0]
                return PhoneHub.Robot(id: "r\(i)", name: "robot \(i)", peer: .init(address: address, label: "robot \(i)"))
            })
            link = try TeacherLink(hub: hub, teacherKey: TeacherLinkReportTests.keyText, session: "AnalogRemote",
                                   events: try TeacherLog(directory: nil), logger: Logger(label: "test"), onProven: onProven)
            link.start()
            // As an open page's pushes do; on a thread of its own (the tests around it block
            // theirs, and a busy cooperative pool would let the watch lapse).
            let keepOpen = Thread { [link, closed] in
                while !closed.raised.load(ordering: .relaxed) { link.dashboardOpen(); Thread.sleep(forTimeInterval: 0.2) }
            }
            keepOpen.start()
        }

        func close() { closed.raised.store(true, ordering: .relaxed); link.stop() }

        /// What the teacher's page gets: the rows as the WebSocket pushes them.
        var page: [String: Any] {
            let text = TeacherRows.json(link.rows(), now: .now, dropped: link.droppedReports)
            return (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
        }

        /// The first row as the page shows it, without what moves by itself (ages, uptime, rates).
        var shownRow: [String: String] {
            guard let rows = page["rows"] as? [[String: Any]], let row = rows.first else { return [:] }
            var out: [String: String] = [:]
            for (k, v) in row where !["heard", "uptime", "sps"].contains(k) {
                // A nested object (`sensors`) in key order: a dictionary's own order varies.
                out[k] = (v as? [String: Any]).map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") } ?? "\(v)"
            }
            return out
        }

        func waitFor(_ what: String, timeout: Duration = .seconds(10), _ done: () -> Bool) throws {
            guard poll(timeout: timeout, done) else { throw TeacherLinkTestError("timed out waiting for \(what): \(page)") }
        }

        func poll(timeout: Duration = .seconds(10), _ done: () -> Bool) -> Bool {
            let end = ContinuousClock.now + timeout
            while !done() {
                guard ContinuousClock.now < end else { return false }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return true
        }

        /// The lesson's log as the dashboard's Log (CSV) button gives it: a row's every change of
        /// state or driver is in it, so a report that painted a row even for a moment shows here.
        var log: String { link.events.csv() }
    }

    struct TeacherLinkTestError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func datagram(_ report: WatchReport) -> [UInt8] {
        ControlDatagram(header: ControlHeader(type: .watchReport, connection: 0x1234),
                        payload: ControlMessage.watchReport(report).encodePayload()[...]).encode()
    }

    static func signed(_ report: WatchReport, key: [UInt8] = macKey, nonce: UInt64) -> [UInt8] {
        var r = report
        r.sign(key: key, watchNonce: nonce)
        return datagram(r)
    }

    static let free = WatchReport(serial: 1, uptimeSeconds: 5, state: .free, robotID: 0x98e89e894b, name: "robot-1",
                                  board: "kit profile", transport: "sim", version: "test")
    /// What a forger wants the teacher to see: robot-1 driven by Ann.
    static let driving = WatchReport(serial: 1_000, uptimeSeconds: 5, state: .driving, robotID: 0x98e89e894b,
                                     rttMeanMillis: 3, rttMaxMillis: 4, lossPerMille: 0, statesPerSecond: 50,
                                     name: "robot-1", driver: "Ann", board: "kit profile", transport: "sim", version: "test")

    /// A stand-in robot answers the dashboard's watches with genuine reports, then the same
    /// socket (a forger with the robot's own address and port: the strongest spoof) and another
    /// one send forged, unsigned, replayed and foreign reports. Only genuine, newer reports
    /// change the row; each other one is counted, and the count reaches the page.
    @Test func onlyReportsSignedForALiveWatchOfThisDashboardReachTheRow() throws {
        let robot = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { robot.close() }
        let dashboard = try Dashboard(ports: [try robot.localAddress().port])
        defer { dashboard.close() }

        // The dashboard asks who the robot is (an unsigned query) and watches it once a signed
        // reply has named it: the watch's nonce, and where it comes from.
        var buffer = [UInt8](repeating: 0, count: 2048)
        var watch: (nonce: UInt64, from: SocketAddress)?
        let end = ContinuousClock.now + .seconds(5)
        while watch == nil, ContinuousClock.now < end {
            guard let (n, from) = try robot.receive(into: &buffer, timeout: .milliseconds(200)),
                  let d = try? ControlDatagram.decode(Array(buffer[..<n])) else { continue }
            switch try? ControlMessage.decode(type: d.header.type, payload: d.payload) {
            case .stopAll(let q)?:
                #expect(q.action == .query)
                var reply = ControlMessage.StopAllReply(nonce: q.nonce, outcome: .released, displayName: "robot-1", text: "id:k3m9x2ab")
                reply.sign(key: Self.macKey)
                _ = try robot.send(ControlDatagram(header: ControlHeader(type: .stopAllReply, connection: 0x1234),
                                                   payload: ControlMessage.stopAllReply(reply).encodePayload()[...]).encode(), to: from)
            case .teacher(let c)?:
                #expect(c.action == .watch && c.verify(key: Self.macKey) && c.target == "id:k3m9x2ab", "\(c)")
                watch = (c.nonce, from)
            default:
                continue
            }
        }
        let (nonce, to) = try #require(watch, "the dashboard sent no watch")

        var genuine = Self.free
        _ = try robot.send(Self.signed(genuine, nonce: nonce), to: to)
        try dashboard.waitFor("the genuine report") { dashboard.shownRow["state"] == "free" }
        let before = dashboard.shownRow, version = dashboard.link.version
        #expect(before["name"] == "robot-1" && before["driver"] == "" && before["robotId"] == "k3m9x2ab", "\(before)")
        #expect(dashboard.page["dropped"] as? Int == 0, "a genuine report was dropped")

        let unsigned = Array(Self.datagram(Self.driving).dropLast(TeacherMAC.size))
        var replayedDriving = Self.driving
        replayedDriving.serial = 1   // the genuine report's serial, with other fields
        let forged: [(String, [UInt8])] = [
            ("unsigned, as older receivers sent", unsigned),
            ("signed with another key", Self.signed(Self.driving, key: Self.otherKey, nonce: nonce)),
            ("a MAC of zeros", Self.datagram(Self.driving)),
            ("signed for another dashboard's watch", Self.signed(Self.driving, nonce: nonce &+ 1)),
            ("the genuine report again (a replay)", Self.signed(genuine, nonce: nonce)),
            ("the genuine MAC on other fields", {
                var r = replayedDriving
                var g = genuine
                g.sign(key: Self.macKey, watchNonce: nonce)
                r.mac = g.mac
                return Self.datagram(r)
            }()),
            ("an invented robot", Self.signed(WatchReport(serial: 7, uptimeSeconds: 1, state: .driving, robotID: 42, name: "robot-9",
                                                          driver: "Zed"), key: Self.otherKey, nonce: nonce)),
        ]
        for (_, bytes) in forged { _ = try robot.send(bytes, to: to) }
        // From another address: even a genuine report is not the robot's.
        let stranger = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { stranger.close() }
        genuine.serial = 2
        _ = try stranger.send(Self.signed(genuine, nonce: nonce), to: to)

        // A newer genuine report, sent after all of them on the same socket: once the row
        // shows it, the link has read (and judged) everything before it.
        genuine.serial = 3
        genuine.failsafes = 1   // a visible change, so the row's taking it is seen
        _ = try robot.send(Self.signed(genuine, nonce: nonce), to: to)
        try dashboard.waitFor("the next genuine report") { dashboard.shownRow["failsafes"] == "1" }
        var after = dashboard.shownRow
        after["failsafes"] = before["failsafes"]
        #expect(after == before, "a forged report changed what the page shows")
        // Not even for a moment: no change of state, driver or flags was pushed, none logged.
        #expect(dashboard.link.version == version, "a forged report changed a row (pushed to the page)")
        #expect(!dashboard.log.contains("Ann") && !dashboard.log.contains("robot-9") && !dashboard.log.contains(",state,"), "\(dashboard.log)")
        #expect(dashboard.page["dropped"] as? Int == forged.count + 1, "dropped \(dashboard.page["dropped"] ?? "nil") of \(forged.count + 1)")
        #expect(!dashboard.link.rows().contains { $0.report?.driver == "Ann" || $0.name == "robot-9" })
    }

    /// A real receiver with the teacher key, a real dashboard link, and a classmate with a raw
    /// socket on loopback: it sniffs the dashboard's port, collects genuine reports the receiver
    /// signed for a second dashboard of its own (same key) and replays them to ours from the
    /// receiver's own address and port, with forged and unsigned ones that show the robot
    /// driven by Ann. The dashboard keeps showing the robot as it is: free, nobody driving.
    @Test(.enabled(if: SpoofedUDP.available, "needs CAP_NET_RAW (raw sockets) to forge source addresses"))
    func forgedAndReplayedReportsFromTheRobotsAddressChangeNothingOnTheDashboard() throws {
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim",
                                                       "--name", "robot-t", "--teacher-key", Self.keyText])
        defer { receiver.signal(SIGTERM); _ = receiver.wait() }
        #expect(receiver.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
        let first = receiver.stdout.split(separator: "\n").first ?? ""
        let port = try #require(UInt16(first.dropFirst("receiving on udp port ".count)), "receiver did not start: \(receiver.stderr)")

        let sniffer = try UDPSniffer()
        let dashboard = try Dashboard(ports: [port])
        defer { dashboard.close() }
        // The name comes with the signed watch reply, the state with the first report after it.
        try dashboard.waitFor("the receiver's first report") { dashboard.shownRow["name"] == "robot-t" && dashboard.shownRow["state"] != nil }
        let before = dashboard.shownRow, version = dashboard.link.version
        #expect(before["state"] == "free" && before["driver"] == "", "\(before)")
        // The dashboard's port, as anyone on the LAN sees its watches go by.
        let watch = try #require(sniffer.first(toPort: port, timeout: .seconds(5)) { $0.count > 3 && $0[3] == ControlType.teacher.rawValue })
        // A report the receiver sent to our dashboard, to replay later.
        let sniffedReport = try #require(sniffer.first(toPort: watch.sourcePort, timeout: .seconds(5)) {
            $0.count > 3 && $0[3] == ControlType.watchReport.rawValue
        })

        // Another dashboard with the same key watches the robot: its reports are genuine, made for it.
        let other = try UDPSocket.sender(for: try SocketAddress.resolve(host: "127.0.0.1", port: port)[0])
        defer { other.close() }
        var c = TeacherCommand(action: .watch, unixMillis: WallClock.unixMillis(), nonce: .random(in: 1...UInt64.max),
                               session: "AnalogRemote", target: "robot-t")
        c.sign(key: Self.macKey)
        _ = try other.send(ControlDatagram(header: ControlHeader(type: .teacher, connection: 77),
                                           payload: ControlMessage.teacher(c).encodePayload()[...]).encode(),
                           to: try SocketAddress.resolve(host: "127.0.0.1", port: port)[0])
        var foreign: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let end = ContinuousClock.now + .seconds(3)
        while foreign.count < 2, ContinuousClock.now < end {
            guard let (n, _) = try other.receive(into: &buffer, timeout: .milliseconds(200)),
                  let d = try? ControlDatagram.decode(Array(buffer[..<n])), d.header.type == .watchReport else { continue }
            foreign.append(Array(buffer[..<n]))
        }
        #expect(foreign.count == 2, "the second dashboard got no reports")

        var driving = Self.driving
        driving.name = "robot-t"
        // A genuine report of ours with its sensor block changed on the way (sensor 1 and the
        // switch): the block is under the MAC, so it is dropped like any forgery.
        let sniffed = try ControlDatagram.decode(sniffedReport.payload)
        guard case .watchReport(let genuineReport) = try ControlMessage.decode(type: sniffed.header.type, payload: sniffed.payload) else {
            Issue.record("the sniffed datagram is not a report"); return
        }
        #expect(genuineReport.sensors != nil, "the receiver's report carries no sensor block")
        var tampered = sniffedReport.payload
        tampered[tampered.count - TeacherMAC.size - 7] = 0xC8
        tampered[tampered.count - TeacherMAC.size - 3] = 1
        let forged: [[UInt8]] = foreign + [
            tampered,
            sniffedReport.payload,                                                  // a replay of one we took
            Array(Self.datagram(driving).dropLast(TeacherMAC.size)),                // unsigned
            Self.signed(driving, key: Self.otherKey, nonce: c.nonce),               // another key
        ]
        let raw = try SpoofedUDP()
        for bytes in forged { try raw.send(bytes, fromPort: port, toPort: watch.sourcePort) }

        // Two more genuine reports (one a second at most… two a second): the link has read the
        // forged ones by then, all from one socket's queue.
        let dropped = { dashboard.page["dropped"] as? Int ?? -1 }
        #expect(dashboard.poll { dropped() >= forged.count }, "only \(dropped()) of \(forged.count) forged reports dropped")
        // Genuine reports go on meanwhile (two a second); a few more of them are taken.
        Thread.sleep(forTimeInterval: 1.2)
        let after = dashboard.shownRow
        #expect(after == before, "the page changed: \(before) → \(after)")
        #expect(dashboard.link.version == version && !dashboard.log.contains("Ann"), "a forged report changed the row: \(dashboard.log)")
        #expect(dropped() == forged.count, "dropped \(dropped()) of \(forged.count): a genuine report dropped, or a forged one taken")
        #expect(receiver.isRunning, "\(receiver.stderr)")
    }
}
