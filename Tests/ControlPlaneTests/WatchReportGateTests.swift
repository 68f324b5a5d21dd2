import ControlPlane
import ControlWire
import RemoteWire
import Testing

/// The dashboard's check of watch reports (ControlPlane/WatchReportGate.swift, Protocol.md §7.12)
/// on an injected clock: taken only when signed for one of its live watch nonces and newer than
/// what it took.
@Suite struct WatchReportGateTests {
    let t0 = ContinuousClock.now
    let key = Array("teacher-secret".utf8)

    func payload(serial: UInt32, nonce: UInt64, key: [UInt8]? = nil, driver: String = "") -> ArraySlice<UInt8> {
        var r = WatchReport(serial: serial, uptimeSeconds: 9, state: driver.isEmpty ? .free : .driving, robotID: 7, name: "robot-1",
                            driver: WireText(driver))
        r.sign(key: key ?? self.key, watchNonce: nonce)
        return ControlMessage.watchReport(r).encodePayload()[...]
    }

    func check(_ gate: inout WatchReportGate, serial: UInt32, nonce: UInt64, key: [UInt8]? = nil, at t: Duration) -> WatchReportGate.Drop? {
        gate.check(payload: payload(serial: serial, nonce: nonce, key: key), serial: serial, key: self.key, now: t0 + t)
    }

    /// Genuine reports in order are taken, across a renewal; a replay, one overtaken by a
    /// renewal, and one under a nonce this dashboard never sent are not.
    @Test func takesGenuineNewerReportsOnly() {
        var gate = WatchReportGate()
        #expect(check(&gate, serial: 1, nonce: 10, at: .zero) == .unverified, "no watch sent yet")
        gate.sent(watch: 10, now: t0)
        #expect(check(&gate, serial: 1, nonce: 10, at: .milliseconds(10)) == nil)
        #expect(check(&gate, serial: 2, nonce: 10, at: .milliseconds(500)) == nil)
        #expect(check(&gate, serial: 2, nonce: 10, at: .milliseconds(600)) == .stale, "a replay")
        #expect(check(&gate, serial: 1, nonce: 10, at: .milliseconds(600)) == .stale, "an older one")
        gate.sent(watch: 11, now: t0 + .seconds(1))
        // The receiver keeps counting across the renewal (§7.12).
        #expect(check(&gate, serial: 3, nonce: 11, at: .milliseconds(1010)) == nil)
        #expect(check(&gate, serial: 4, nonce: 10, at: .milliseconds(1020)) == .stale, "under the older nonce after the newer reported")
        #expect(check(&gate, serial: 5, nonce: 12, at: .milliseconds(1030)) == .unverified, "another dashboard's watch")
        #expect(check(&gate, serial: 5, nonce: 11, key: Array("other".utf8), at: .milliseconds(1040)) == .unverified, "another key")
        #expect(check(&gate, serial: 5, nonce: 11, at: .milliseconds(1050)) == nil)
    }

    /// A nonce is good for 4 s after its watch went out (the watch's 3 s and the trip), then a
    /// report signed for it is refused: the watch has ended.
    @Test func aWatchThatEndedTakesNothing() {
        var gate = WatchReportGate()
        gate.sent(watch: 10, now: t0)
        #expect(check(&gate, serial: 1, nonce: 10, at: .milliseconds(3900)) == nil)
        #expect(check(&gate, serial: 2, nonce: 10, at: .milliseconds(4100)) == .unverified)
    }

    /// A robot that restarted counts from 1 again, under the next nonce it takes: taken, and
    /// the old run's late reports are stale from then on.
    @Test func aRestartedRobotIsTakenUnderItsNewWatch() {
        var gate = WatchReportGate()
        gate.sent(watch: 10, now: t0)
        #expect(check(&gate, serial: 40, nonce: 10, at: .milliseconds(100)) == nil)
        gate.sent(watch: 11, now: t0 + .seconds(1))
        #expect(check(&gate, serial: 1, nonce: 11, at: .milliseconds(1100)) == nil)
        #expect(check(&gate, serial: 41, nonce: 10, at: .milliseconds(1200)) == .stale)
        #expect(check(&gate, serial: 2, nonce: 11, at: .milliseconds(1500)) == nil)
    }

    /// The changed row bytes of a genuine report fail: the MAC covers every byte before it.
    @Test func aChangedByteFails() {
        var gate = WatchReportGate()
        gate.sent(watch: 10, now: t0)
        var bytes = Array(payload(serial: 1, nonce: 10))
        bytes[8] ^= 0x01   // the state
        #expect(gate.check(payload: bytes[...], serial: 1, key: key, now: t0) == .unverified)
        #expect(gate.check(payload: payload(serial: 1, nonce: 10).dropLast(), serial: 1, key: key, now: t0) == .unverified)
    }

    /// At most ``WatchReportGate/maxNonces`` nonces are kept however fast watches go out.
    @Test func keepsAFewNoncesOnly() {
        var gate = WatchReportGate()
        for n in UInt64(1)...20 { gate.sent(watch: n, now: t0) }
        #expect(check(&gate, serial: 1, nonce: 12, at: .zero) == .unverified)
        #expect(check(&gate, serial: 1, nonce: 13, at: .zero) == nil)
    }
}
