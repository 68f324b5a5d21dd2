import ControlPlane
import ControlWire
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// The receiver's side of the teacher's dashboard over real UDP (Protocol.md §7.10–§7.12):
/// a receiver without a teacher key refuses to be watched and says so; with one it reports at
/// most twice a second what the dashboard shows, and Identify blinks the LEDs without a motor write.
@Suite(.serialized) struct TeacherWatchEndToEndTests {
    static let key = "maple tree grove"
    /// The MAC keys, stretched once up front (scrypt takes a while in a debug build, and a
    /// driver must not fall silent meanwhile).
    static let macKey = try! TeacherKey(text: key).macKey
    static let wrongMacKey = try! TeacherKey(text: "a wrong teacher key").macKey

    /// A dashboard's socket: sends signed commands, collects what comes back.
    final class Dashboard {
        let socket: UDPSocket
        let target: SocketAddress
        var buffer = [UInt8](repeating: 0, count: 2048)

        init(port: UInt16) throws {
            target = try SocketAddress.resolve(host: "127.0.0.1", port: port)[0]
            socket = try UDPSocket.sender(for: target)
        }

        /// Sends a command; returns its nonce.
        @discardableResult
        func send(_ action: TeacherCommand.Action, key: [UInt8] = TeacherWatchEndToEndTests.macKey, target name: String = "robot-t") throws -> UInt64 {
            var c = TeacherCommand(action: action, unixMillis: WallClock.unixMillis(), nonce: .random(in: 1...UInt64.max),
                                   session: "AnalogRemote", target: WireText(name))
            c.sign(key: key)
            let datagram = ControlDatagram(header: ControlHeader(type: .teacher, connection: 77), payload: ControlMessage.teacher(c).encodePayload()[...])
            _ = try socket.send(datagram.encode(), to: target)
            return c.nonce
        }

        /// Every message that arrives within `duration`, with its arrival.
        func collect(for duration: Duration) throws -> [(ContinuousClock.Instant, ControlMessage)] {
            var out: [(ContinuousClock.Instant, ControlMessage)] = []
            let end = ContinuousClock.now + duration
            while ContinuousClock.now < end {
                guard let (n, _) = try socket.receive(into: &buffer, timeout: end - .now),
                      let d = try? ControlDatagram.decode(Array(buffer[..<n])),
                      let m = try? ControlMessage.decode(type: d.header.type, payload: d.payload) else { continue }
                out.append((.now, m))
            }
            return out
        }
    }

    @Test func withoutATeacherKeyAReceiverRefusesToBeWatchedAndSaysSo() throws {
        let r = try RunningReceiver(["--name", "robot-t"])
        let dashboard = try Dashboard(port: r.port)
        try dashboard.send(.watch)
        let got = try dashboard.collect(for: .milliseconds(1500))
        let replies = got.compactMap { if case .teacherReply(let reply) = $0.1 { reply } else { nil } }
        #expect(replies.count == 1 && replies[0].outcome == .refused && replies[0].text.text == TeacherGuard.noKey, "\(got)")
        #expect(!got.contains { if case .watchReport = $0.1 { true } else { false } }, "reports from a receiver with no key")
        r.process.signal(SIGTERM)
        _ = r.process.wait()
    }

    @Test func aWatchedReceiverReportsAtMostTwiceASecondAndIdentifiesWithoutTouchingTheMotors() throws {
        _ = (Self.macKey, Self.wrongMacKey)
        let r = try RunningReceiver(["--name", "robot-t", "--teacher-key", Self.key])
        let driver = try TestController(port: r.port)
        try driver.send(.neutral)
        try driver.send(ControllerState(angle: 0, buttons: .forward))
        let forward = RunningReceiver.kitMap(left: 0xC0, right: 0x40)
        #expect(r.waitForMap { $0[0x22] == forward[0x22] && $0[0x23] == forward[0x23] }, "never drove")

        let dashboard = try Dashboard(port: r.port)
        let refusedNonce = try dashboard.send(.watch, key: Self.wrongMacKey)
        let nonce = try dashboard.send(.watch)
        // Keep driving while watched (the failsafe would stop a silent driver).
        var reports: [(ContinuousClock.Instant, WatchReport)] = []
        var replies: [TeacherReply] = []
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(2) {
            try driver.send(ControllerState(angle: 0, buttons: .forward))
            for (t, m) in try dashboard.collect(for: .milliseconds(40)) {
                if case .watchReport(let w) = m { reports.append((t, w)) }
                if case .teacherReply(let reply) = m { replies.append(reply) }
            }
        }
        #expect(replies.map(\.outcome) == [.refused, .done] && replies[0].text.text.contains("wrong teacher key"), "\(replies)")
        #expect((4...5).contains(reports.count), "\(reports.count) reports in 2 s")
        for pair in zip(reports, reports.dropFirst()) {
            #expect(pair.1.0 - pair.0.0 > .milliseconds(400), "two reports \(pair.1.0 - pair.0.0) apart")
        }
        // Each report is signed for the watch taken (§7.12): not for the refused one, nor another key.
        #expect(reports.allSatisfy { $0.1.verify(key: Self.macKey, watchNonce: nonce) }, "a report not signed for the watch")
        #expect(!reports.contains { $0.1.verify(key: Self.macKey, watchNonce: refusedNonce) || $0.1.verify(key: Self.wrongMacKey, watchNonce: nonce) })
        #expect(reports.map(\.1.serial) == Array(1...UInt32(reports.count)), "serials \(reports.map(\.1.serial))")
        let last = try #require(reports.last?.1)
        #expect(last.state == .driving && last.name == "robot-t" && last.driver.text.hasPrefix("127.0.0.1:") && last.statesPerSecond > 0, "\(last)")
        #expect(last.transport == "sim" && !last.version.isEmpty && last.rttMeanMillis == WatchReport.unknown, "a plain sender answers no ping")

        let before = r.maps.count
        try dashboard.send(.identify)
        let blink = ContinuousClock.now
        while ContinuousClock.now - blink < .milliseconds(3300) {
            try driver.send(ControllerState(angle: 0, buttons: .forward))
            try Task.checkCancellation()
            Thread.sleep(forTimeInterval: 0.02)
        }
        let during = Array(r.maps.dropFirst(before))
        #expect(Set(during.map { $0[0x0F] }).isSuperset(of: [0, 255]) && Set(during.map { $0[0x10] }).isSuperset(of: [0, 255]), "LEDs never blinked")
        #expect(during.contains { $0[0x09] == 34 }, "no beep")
        #expect(during.allSatisfy { $0[0x22] == forward[0x22] && $0[0x23] == forward[0x23] }, "a motor byte changed during Identify")
        r.process.signal(SIGTERM)
        #expect(r.process.wait() == 0)
    }
}
