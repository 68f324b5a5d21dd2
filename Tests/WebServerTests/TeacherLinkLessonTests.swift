import ControlPlane
import ControlWire
import Foundation
import PhoneLink
import RemoteWire
import SystemIO
import Testing
@testable import WebServer

/// The dashboard through a lesson, over real UDP on loopback: a robot that stops answering and
/// that DNS-SD no longer lists keeps its row (OFFLINE) until the teacher dismisses it; a stop's
/// signed reply changes the row at once; a robot without a teacher key is not offline, is named by
/// its address, gets Stop only (a stop-all for the whole session) and shows what was sent to it;
/// the tiles come in natural and roster order.
@Suite(.serialized) struct TeacherLinkLessonTests {
    typealias Dashboard = TeacherLinkReportTests.Dashboard

    /// A stand-in robot on loopback: answers the dashboard's queries as a receiver with the key
    /// would (signed, naming robot-1 and its id), or as one without (unsigned, `keyed: false`).
    final class StandIn {
        let socket: UDPSocket
        let keyed: Bool
        var watch: (nonce: UInt64, from: SocketAddress)?
        var buffer = [UInt8](repeating: 0, count: 2048)

        init(keyed: Bool = true) throws {
            socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
            self.keyed = keyed
        }

        var port: UInt16 { get throws { try socket.localAddress().port } }

        /// The next control message from the dashboard, with its source (watches are noted).
        func next(timeout: Duration = .seconds(5), _ wanted: (ControlMessage) -> Bool) throws -> (ControlMessage, SocketAddress)? {
            let end = ContinuousClock.now + timeout
            while ContinuousClock.now < end {
                guard let (n, from) = try socket.receive(into: &buffer, timeout: .milliseconds(100)),
                      let d = try? ControlDatagram.decode(Array(buffer[..<n])),
                      let m = try? ControlMessage.decode(type: d.header.type, payload: d.payload) else { continue }
                if case .teacher(let c) = m, c.action == .watch { watch = (c.nonce, from) }
                if case .stopAll(let c) = m, c.action == .query {
                    var reply = ControlMessage.StopAllReply(nonce: c.nonce, outcome: .stopped, displayName: keyed ? "robot-1" : "robot 5",
                                                            text: keyed ? "id:k3m9x2ab" : "")
                    if keyed { reply.sign(key: TeacherLinkReportTests.macKey) }
                    try send(.stopAllReply(reply), to: from)
                }
                if wanted(m) { return (m, from) }
            }
            return nil
        }

        func report(_ report: WatchReport) throws {
            let (nonce, to) = try #require(watch, "no watch yet")
            _ = try socket.send(TeacherLinkReportTests.signed(report, nonce: nonce), to: to)
        }

        func send(_ message: ControlMessage, to: SocketAddress) throws {
            _ = try socket.send(ControlDatagram(header: ControlHeader(type: message.type, connection: 0x1234),
                                                payload: message.encodePayload()[...]).encode(), to: to)
        }
    }

    /// The rows as the page gets them.
    static func rows(_ dashboard: Dashboard) -> [[String: Any]] { (dashboard.page["rows"] as? [[String: Any]]) ?? [] }

    static func isWatch(_ m: ControlMessage) -> Bool {
        if case .teacher(let c) = m { return c.action == .watch }
        return false
    }


    /// A SIGKILLed receiver's responder withdraws its DNS-SD service: the hub no longer lists the
    /// robot. Its row stays, OFFLINE and marked gone, and the link keeps watching its last
    /// address, until the teacher dismisses it.
    @Test func aRobotThatLeavesDNSSDKeepsItsRowUntilDismissed() throws {
        let robot = try StandIn()
        defer { robot.socket.close() }
        let dashboard = try Dashboard(ports: [try robot.port])
        defer { dashboard.close() }
        _ = try #require(try robot.next(Self.isWatch), "no watch")
        try robot.report(TeacherLinkReportTests.driving)
        try dashboard.waitFor("the robot's row, driving") { Self.rows(dashboard).first?["state"] as? String == "driving" }

        // Killed: no more reports, and DNS-SD says "remove".
        dashboard.hub.setRobots([])
        let removed = ContinuousClock.now
        #expect(Self.rows(dashboard).count == 1, "the row vanished with the DNS-SD remove: \(dashboard.page)")
        try dashboard.waitFor("the row OFFLINE") { Self.rows(dashboard).first?["offline"] as? Bool == true }
        let offlineAfter = ContinuousClock.now - removed
        print("OFFLINE \(offlineAfter) after the DNS-SD remove")
        let row = try #require(Self.rows(dashboard).first)
        #expect(row["gone"] as? Bool == true && row["name"] as? String == "robot-1" && row["driver"] as? String == "Ann", "\(row)")
        // Still watched where it was: if it is only unreachable, it comes back by itself.
        #expect(try robot.next(timeout: .seconds(3), Self.isWatch) != nil, "the kept robot is no longer watched")
        Thread.sleep(forTimeInterval: 1)
        #expect(Self.rows(dashboard).count == 1, "the row did not stay")

        dashboard.link.dismiss(robot: "r0")
        #expect(Self.rows(dashboard).isEmpty, "dismissed, yet still shown: \(dashboard.page)")
        // Dismissed: no longer watched (a watch already in flight may still arrive).
        _ = try robot.next(timeout: .milliseconds(300)) { _ in false }
        #expect(try robot.next(timeout: .milliseconds(2500), Self.isWatch) == nil, "a dismissed robot is still watched")
    }

    /// A robot listed by address (`--peer`) that the teacher dismisses comes back as soon as it
    /// answers again.
    @Test func aDismissedRobotComesBackWhenItAnswers() throws {
        let robot = try StandIn()
        defer { robot.socket.close() }
        let dashboard = try Dashboard(ports: [try robot.port])
        defer { dashboard.close() }
        _ = try #require(try robot.next(Self.isWatch), "no watch")
        try robot.report(TeacherLinkReportTests.free)
        try dashboard.waitFor("the robot's row") { Self.rows(dashboard).first?["state"] as? String == "free" }
        dashboard.link.dismiss(robot: "r0")
        #expect(Self.rows(dashboard).isEmpty)
        _ = try #require(try robot.next(timeout: .seconds(3), Self.isWatch), "a listed robot is still watched after a dismiss")
        var again = TeacherLinkReportTests.free
        again.serial = 2
        try robot.report(again)
        try dashboard.waitFor("the row back") { Self.rows(dashboard).count == 1 }
    }

    /// Stop: the robot's signed `stopped` reply shows STOPPED BY TEACHER on its row at once,
    /// with no report in between (reports come only twice a second).
    @Test func aSignedStopReplyChangesTheRowAtOnce() throws {
        let robot = try StandIn()
        defer { robot.socket.close() }
        let dashboard = try Dashboard(ports: [try robot.port])
        defer { dashboard.close() }
        _ = try #require(try robot.next(Self.isWatch), "no watch")
        try robot.report(TeacherLinkReportTests.driving)
        try dashboard.waitFor("the robot's row, driving") { Self.rows(dashboard).first?["state"] as? String == "driving" }

        let clicked = ContinuousClock.now
        dashboard.link.enqueue(.stop, robot: "r0")
        let (message, from) = try #require(try robot.next(timeout: .seconds(2)) { if case .stopAll = $0 { true } else { false } },
                                           "no stop-all came")
        guard case .stopAll(let stop) = message else { return }
        var reply = ControlMessage.StopAllReply(nonce: stop.nonce, outcome: .stopped, displayName: "robot-1", text: "id:k3m9x2ab")
        reply.sign(key: TeacherLinkReportTests.macKey)
        try robot.send(.stopAllReply(reply), to: from)
        try dashboard.waitFor("STOPPED BY TEACHER", timeout: .seconds(1)) { Self.rows(dashboard).first?["state"] as? String == "teacher-stop" }
        let took = ContinuousClock.now - clicked
        print("the row showed the stop \(took) after the command (the stand-in sent no report: the reply alone changed it)")

        // A forged (unsigned) `released` changes nothing.
        dashboard.link.enqueue(.release, robot: "r0")
        let (release, from2) = try #require(try robot.next(timeout: .seconds(2)) { if case .stopAll = $0 { true } else { false } })
        guard case .stopAll(let r) = release else { return }
        try robot.send(.stopAllReply(.init(nonce: r.nonce, outcome: .released, displayName: "robot-1")), to: from2)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(Self.rows(dashboard).first?["state"] as? String == "teacher-stop", "an unsigned reply changed the row")
    }

    /// A receiver without a teacher key answers the dashboard's query unsigned: its row is "not
    /// watched" (not offline while it answers), marked keyless and named by nothing it says. Stop
    /// reaches it as a stop-all signed for the whole session; its unsigned answer is shown as an
    /// answer. Release and every teacher command are not sent to it.
    @Test func aKeylessRobotGetsStopOnlyAndIsNotOffline() throws {
        let robot = try StandIn(keyed: false)
        defer { robot.socket.close() }
        let dashboard = try Dashboard(ports: [try robot.port])
        defer { dashboard.close() }
        _ = try #require(try robot.next(Self.isQuery), "no query")
        try dashboard.waitFor("the keyless row") { Self.rows(dashboard).first?["keyless"] as? Bool == true }
        // It answers every query: never offline, never named by its own words.
        for _ in 0..<3 {
            _ = try #require(try robot.next(Self.isQuery))
            Thread.sleep(forTimeInterval: 0.05)
            let row = Self.rows(dashboard).first ?? [:]
            #expect(row["offline"] as? Bool == false && row["name"] == nil && row["off"] != nil, "\(row)")
        }
        #expect(!Self.isWatchSent(robot), "a keyless robot was watched")
        dashboard.link.enqueue(.stop, robot: "r0")
        let (message, to) = try #require(try robot.next(timeout: .seconds(2)) { if case .stopAll(let c) = $0 { c.action == .stop } else { false } })
        guard case .stopAll(let stop) = message else { return }
        #expect(stop.target.isEmpty && stop.session == "AnalogRemote" && stop.verify(key: TeacherLinkReportTests.macKey),
                "the keyless robot's stop: target \"\(stop.target)\", session \(stop.session)")
        try robot.send(.stopAllReply(.init(nonce: stop.nonce, outcome: .stopped, displayName: "robot 5")), to: to)
        try dashboard.waitFor("the unsigned answer") { Self.rows(dashboard).first?["stop"] as? String == "stopped (unsigned)" }
        #expect(Self.rows(dashboard).first?["sent"] as? String == "stop")
        #expect(Self.rows(dashboard).first?["name"] == nil, "the unsigned answer named the row")
        // Release, identify, kick: not sent (a release for the whole session, forwarded, would free a stopped robot).
        dashboard.link.enqueue(.release, robot: "r0")
        dashboard.link.enqueue(.identify, robot: "r0")
        dashboard.link.enqueue(.kick("bye"), robot: "r0")
        let other = try robot.next(timeout: .milliseconds(1500)) { m in
            if case .stopAll(let c) = m { return c.action != .query }
            if case .teacher = m { return true }
            return false
        }
        #expect(other == nil, "a keyless robot got more than Stop: \(String(describing: other?.0))")
    }

    static func isQuery(_ m: ControlMessage) -> Bool {
        if case .stopAll(let c) = m { return c.action == .query }
        return false
    }

    static func isWatchSent(_ robot: StandIn) -> Bool { robot.watch != nil }

    @Test func tilesComeInNaturalOrderThenRosterOrder() throws {
        let names = ["robot 10", "robot 2", "Robot 1", "robot 02", "robot 11", "arm", "robot 1a", "robot 20", "robot 3"]
        let rows = names.enumerated().map { TeacherLink.Row(id: "i\($0.offset)", label: $0.element) }
        #expect(TeacherRows.ordered(rows, roster: nil).map(\.label)
                == ["arm", "Robot 1", "robot 1a", "robot 2", "robot 02", "robot 3", "robot 10", "robot 11", "robot 20"])
        let roster = Roster(entries: [.init(student: "Ann", robot: "robot 20"), .init(student: "Ben", robot: "ROBOT 3"),
                                      .init(student: "Cy", robot: "robot 20")])
        #expect(TeacherRows.ordered(rows, roster: roster).map(\.label)
                == ["robot 20", "robot 3", "arm", "Robot 1", "robot 1a", "robot 2", "robot 02", "robot 10", "robot 11"])
    }

    @Test func plainHTTPCookieIsNotSecure() {
        #expect(TeacherAuth(key: "maple tree").setCookie("t").contains("Secure"))
        let plain = TeacherAuth(key: "maple tree", secureCookie: false)
        #expect(!plain.setCookie("t").contains("Secure") && plain.setCookie("t").contains("HttpOnly; SameSite=Strict"))
        #expect(!plain.clearCookie.contains("Secure"))
    }
}
