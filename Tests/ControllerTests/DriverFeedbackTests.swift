import ControlWire
import Controller
import ControlPlane
import RemoteWire
import Testing

/// The driver's view (DriverFeedback): reports ordered by revision, silence after 2 s, and
/// "no receiver" from ECONNREFUSED, with an injected clock.
@Suite struct DriverFeedbackTests {
    let t0 = ContinuousClock.now

    @Test func anOlderReportNeverReplacesANewerOne() {
        var f = DriverFeedback(target: "127.0.0.1:27183", now: t0)
        #expect(f.headline(now: t0)?.text == "CONNECTING")
        let r1 = f.take(RobotReport(revision: 5, state: .failsafe(.silence), board: "sim"), connection: 1, now: t0)
        #expect(r1)
        let r2 = f.take(RobotReport(revision: 4, state: .driving, board: "sim"), connection: 1, now: t0)
        #expect(!r2, "late and older: dropped")
        #expect(f.report?.state == .failsafe(.silence))
        let r3 = f.take(RobotReport(revision: 5, state: .failsafe(.silence), board: "sim"), connection: 1, now: t0)
        #expect(!r3, "a repeat is no news")
        // A restarted receiver (new connection id) starts its revisions again.
        let r4 = f.take(RobotReport(revision: 1, state: .driving, board: "sim"), connection: 2, now: t0)
        #expect(r4)
        #expect(f.headline(now: t0)?.text == "DRIVING" && f.headline(now: t0)?.tone == .good)
    }

    @Test func silenceIsToldAfterTwoSecondsAndEndsWithTheNextAnswer() {
        var f = DriverFeedback(target: "10.0.0.2:27183", now: t0)
        #expect(f.silence(now: t0 + .milliseconds(1999)) == nil)
        #expect(f.headline(now: t0 + .seconds(2))?.text == "NO ANSWER from 10.0.0.2:27183 for 2 s")
        f.answered(now: t0 + .seconds(3))
        #expect(f.silence(now: t0 + .seconds(4)) == nil)
        #expect(f.headline(now: t0 + .seconds(4)) == nil, "answered, but no robot state (a game host): no lead")
        #expect(f.headline(now: t0 + .seconds(5))?.text == "NO ANSWER for 2 s")
    }

    @Test func connectionRefusedIsToldOnceUntilAnAnswer() {
        var f = DriverFeedback(target: "127.0.0.1:9", now: t0)
        let r5 = f.connectionRefused()
        #expect(r5)
        let r6 = f.connectionRefused()
        #expect(!r6)
        #expect(f.headline(now: t0)?.text == "NO RECEIVER at 127.0.0.1:9")
        f.answered(now: t0)
        #expect(!f.noReceiver)
        let r7 = f.connectionRefused()
        #expect(r7, "refused again after an answer: told again")
    }
}
