import BoardProtocol
import ControlPlane
import ControlWire
import Foundation
import Logging
import RemoteWire
import Synchronization
import SystemIO
import TestSupport
import Testing
@testable import WebServer

/// The robots' round fed by a real dashboard link over loopback: three stand-in robots prove
/// the teacher key, are watched, and send signed reports with their sensor blocks. Robot 2's
/// press first wins; forged and replayed reports that "press" robot 1's switch (another key,
/// another dashboard's watch, robot 1's genuine report sent from another address, its block
/// changed under the MAC) are dropped by the link and change nothing in the round.
@Suite(.serialized) struct TeacherRobotRoundLinkTests {
    typealias Dashboard = TeacherLinkReportTests.Dashboard

    /// A robot with the teacher key, as far as the dashboard can tell: it answers the query with
    /// a signed reply naming its robot id and, once watched, reports every 250 ms, signed for
    /// the latest watch, with its switch as the test sets it.
    final class StandIn: Sendable {
        let socket: UDPSocket
        let robotID: UInt64
        let name: String
        struct State: Sendable {
            var watch: (nonce: UInt64, to: SocketAddress)?
            var serial: UInt32 = 0
            var pressed = false
            var silent = false
            var stopped = false
        }
        let state = Mutex(State())
        private let finished = Mutex(false)

        init(robotID: UInt64, name: String) throws {
            socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
            self.robotID = robotID
            self.name = name
            let t = Thread { [self] in run() }
            t.start()
        }

        var port: UInt16 { (try? socket.localAddress().port) ?? 0 }

        func report(serial: UInt32, pressed: Bool) -> WatchReport {
            WatchReport(serial: serial, uptimeSeconds: 9, state: .free, robotID: robotID, name: WireText(name), board: "kit", transport: "sim",
                        version: "test", sensors: SensorBlock(sensors: [10, 20, 30, 40], switchValue: pressed ? 1 : 0, temperature: 21, humidity: 40))
        }

        /// The report it would send next (not sent): for the forgeries.
        func nextGenuine(pressed: Bool) -> (datagram: [UInt8], to: SocketAddress)? {
            state.withLock { s in
                guard let w = s.watch else { return nil }
                return (TeacherLinkReportTests.signed(report(serial: s.serial + 1, pressed: pressed), nonce: w.nonce), w.to)
            }
        }

        func stop() {
            state.withLock { $0.stopped = true }
            for _ in 0..<100 where !finished.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
            socket.close()
        }

        private func run() {
            defer { finished.withLock { $0 = true } }
            var buffer = [UInt8](repeating: 0, count: 2048)
            var nextReport = ContinuousClock.now
            while !state.withLock({ $0.stopped }) {
                if let (n, from) = try? socket.receive(into: &buffer, timeout: .milliseconds(20)),
                   let d = try? ControlDatagram.decode(Array(buffer[..<n])) {
                    switch try? ControlMessage.decode(type: d.header.type, payload: d.payload) {
                    case .stopAll(let q)? where q.action == .query:
                        var reply = ControlMessage.StopAllReply(nonce: q.nonce, outcome: .released, displayName: WireText(name),
                                                                text: WireText(RobotID(value: robotID)!.target))
                        reply.sign(key: TeacherLinkReportTests.macKey)
                        _ = try? socket.send(ControlDatagram(header: ControlHeader(type: .stopAllReply, connection: 0x1234),
                                                             payload: ControlMessage.stopAllReply(reply).encodePayload()[...]).encode(), to: from)
                    case .teacher(let c)? where c.action == .watch && c.verify(key: TeacherLinkReportTests.macKey):
                        state.withLock { $0.watch = (c.nonce, from) }
                    default:
                        break
                    }
                }
                guard ContinuousClock.now >= nextReport else { continue }
                nextReport = .now + .milliseconds(250)
                let due = state.withLock { s -> (WatchReport, UInt64, SocketAddress)? in
                    guard let w = s.watch, !s.silent else { return nil }
                    s.serial += 1
                    return (report(serial: s.serial, pressed: s.pressed), w.nonce, w.to)
                }
                if let (r, nonce, to) = due { _ = try? socket.send(TeacherLinkReportTests.signed(r, nonce: nonce), to: to) }
            }
        }
    }

    @Test func robotTwosPressWinsAndForgedPressesOfRobotOneChangeNothing() throws {
        let robots = try (1...3).map { try StandIn(robotID: 0x98e89e8940 + UInt64($0), name: "robot-\($0)") }
        defer { for r in robots { r.stop() } }
        let dashboard = try Dashboard(ports: robots.map(\.port))
        defer { dashboard.close() }
        let teacher = try TeacherRobotRoundTests.dashboard(link: dashboard.link)
        let robotGame = teacher.robotGame
        defer { teacher.stop() }
        try dashboard.waitFor("three robots with sensors") {
            dashboard.link.rows().filter { $0.report?.sensors != nil }.count == 3
        }

        teacher.command(#"{"t":"robot-game-start","rule":"switch"}"#)
        try dashboard.waitFor("the round") { robotGame.snapshot.playing }
        #expect(robotGame.snapshot.round?.standings.map(\.name).sorted() == ["robot-1", "robot-2", "robot-3"])
        // Every robot's switch is seen let go in the round before any press counts.
        Thread.sleep(forTimeInterval: 0.6)

        // Robot 1's switch "pressed" by everyone but robot 1.
        let robot1 = robots[0]
        let (genuinePress, to) = try #require(robot1.nextGenuine(pressed: true))
        let stranger = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        defer { stranger.close() }
        let (nonce, serial) = try #require(robot1.state.withLock { s in s.watch.map { ($0.nonce, s.serial) } })
        var tampered = TeacherLinkReportTests.signed(robot1.report(serial: serial + 50, pressed: false), nonce: nonce)
        tampered[tampered.count - TeacherMAC.size - 3] = 1   // the switch byte, under the MAC
        let forged: [(UDPSocket, [UInt8])] = [
            (stranger, genuinePress),                                                   // its genuine report, from another address
            (robot1.socket, TeacherLinkReportTests.signed(robot1.report(serial: serial + 100, pressed: true),
                                                          key: TeacherLinkReportTests.otherKey, nonce: nonce)),  // another key
            (robot1.socket, TeacherLinkReportTests.signed(robot1.report(serial: serial + 100, pressed: true),
                                                          nonce: nonce &+ 1)),         // another dashboard's watch
            (robot1.socket, tampered),                                                  // the block changed under the MAC
        ]
        let droppedBefore = dashboard.link.droppedReports
        for (socket, bytes) in forged { _ = try socket.send(bytes, to: to) }
        try dashboard.waitFor("the forgeries dropped") { dashboard.link.droppedReports == droppedBefore + forged.count }
        // Robot 1's genuine reports go on (switch up): it is still playing, nobody has won.
        Thread.sleep(forTimeInterval: 0.6)
        #expect(robotGame.snapshot.round?.standings.allSatisfy { $0.result == "playing" } == true, "\(robotGame.snapshot)")

        robots[1].state.withLock { $0.pressed = true }
        try dashboard.waitFor("robot 2's win") { robotGame.snapshot.round?.standings.first.map { "\($0.name) \($0.result)" } == "robot-2 won" }
        robots[0].state.withLock { $0.pressed = true }
        try dashboard.waitFor("robot 1 second") { robotGame.snapshot.round?.standings.dropFirst().first?.result == "done" }
        robots[2].state.withLock { $0.silent = true }
        try dashboard.waitFor("robot 3 out and the round over") { !robotGame.snapshot.playing }
        let shown = robotGame.snapshot.round?.standings.map { "\($0.name) \($0.result)" }
        #expect(shown == ["robot-2 won", "robot-1 done", "robot-3 out"])
        // What the page gets.
        let page = TeacherRows.json([], now: .now, robotGame: robotGame.snapshot)
        #expect(page.contains(#""name":"robot-2","result":"won""#), "\(page)")
        let log = dashboard.log   // the Log (CSV) button's file
        #expect(log.contains(",game-start,\"robot round 1 (switch), 3 robots"), "\(log)")
        #expect(log.contains(",game-result,\"robot round 1 (switch), 3 robots: 1. robot-2 won "), "\(log)")
    }

    /// The same round with real robots: three board-sims whose switches the test presses (their
    /// `--sensors` files), three receivers with the teacher key, and the dashboard's link
    /// watching them. Robot 2 pressed first wins; robot 1 pressed later is second; robot 3,
    /// whose receiver is then stopped, is out; the lesson's log has the result.
    @Test func threeRobotsOnBoardSimRobotTwoPressedFirstWins() throws {
        let dir = NSTemporaryDirectory() + "analog-remote-dash-round-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var processes: [ChildProcess] = []
        defer {
            for p in processes.reversed() { p.stop() }
            try? FileManager.default.removeItem(atPath: dir)
        }
        func set(_ n: Int, _ text: String) throws {
            let file = "\(dir)/sensors\(n)"
            try text.write(toFile: file + ".new", atomically: false, encoding: .utf8)
            guard rename(file + ".new", file) == 0 else { throw TeacherLinkReportTests.TeacherLinkTestError("rename \(file)") }
        }
        var ports: [UInt16] = []
        var receivers: [ChildProcess] = []
        for n in 1...3 {
            try set(n, "switch=0 sensor1=10\n")
            let sim = try ChildProcess(analogRemote: ["board-sim", "--quiet", "--firmware", "stock", "--sensors", "\(dir)/sensors\(n)",
                                                      "--link", "\(dir)/board\(n)"])
            processes.append(sim)
            #expect(sim.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") }, "board-sim \(n): \(sim.stderr)")
            let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--name", "robot-\(n)",
                                                           "--teacher-key", TeacherLinkReportTests.keyText, "--board", "serial:\(dir)/board\(n)",
                                                           "--state-dir", "\(dir)/state\(n)"])
            processes.append(receiver)
            receivers.append(receiver)
            #expect(receiver.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") })
            let first = receiver.stdout.split(separator: "\n").first ?? ""
            ports.append(try #require(UInt16(first.dropFirst("receiving on udp port ".count)), "receiver \(n) did not start: \(receiver.stderr)"))
        }
        let dashboard = try Dashboard(ports: ports)
        defer { dashboard.close() }
        let teacher = try TeacherRobotRoundTests.dashboard(link: dashboard.link)
        let robotGame = teacher.robotGame
        defer { teacher.stop() }
        try dashboard.waitFor("three robots' sensors", timeout: .seconds(20)) {
            dashboard.link.rows().filter { $0.report?.sensors?.sensors.first == 10 }.count == 3
        }
        teacher.command(#"{"t":"robot-game-start","rule":"switch"}"#)
        try dashboard.waitFor("the round") { robotGame.snapshot.playing }
        // Each robot's switch seen up in the round (reports every 0.5 s) before the press.
        Thread.sleep(forTimeInterval: 1.2)
        #expect(robotGame.snapshot.round?.standings.allSatisfy { $0.result == "playing" } == true, "\(robotGame.snapshot)")

        let pressed = ContinuousClock.now
        try set(2, "switch=1 sensor1=10\n")
        try dashboard.waitFor("robot 2's win") { robotGame.snapshot.round?.standings.first.map { "\($0.name) \($0.result)" } == "robot-2 won" }
        print("robot 2's press reached the dashboard's round after \(ContinuousClock.now - pressed) (reports every 0.5 s)")
        try set(1, "switch=1 sensor1=10\n")
        try dashboard.waitFor("robot 1 second") { robotGame.snapshot.round?.standings.dropFirst().first?.result == "done" }
        receivers[2].stop()
        try dashboard.waitFor("robot 3 out and the round over") { !robotGame.snapshot.playing }
        #expect(robotGame.snapshot.round?.standings.map { "\($0.name) \($0.result)" } == ["robot-2 won", "robot-1 done", "robot-3 out"])
        #expect(dashboard.log.contains(",game-result,\"robot round 1 (switch), 3 robots: 1. robot-2 won "), "\(dashboard.log)")
        #expect(dashboard.link.droppedReports == 0, "a genuine report was dropped")
    }
}
