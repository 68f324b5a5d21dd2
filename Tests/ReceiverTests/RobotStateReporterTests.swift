import BoardLink
import ControlWire
import Receiver
import SystemIO
import ControlPlane
import RemoteWire
import Testing

/// Which robot-state report each controller gets, and when (Protocol.md §7.9), with a manual
/// clock: a report is due in the very loop turn that changed it — the engine step and the
/// reporter's `due` run in the same turn, so there is no delay to time.
@Suite struct RobotStateReporterTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)

    final class Rig {
        let h: EngineHarness
        var reporter = RobotStateReporter<String>(board: "sim")
        var names: [String: String] = ["A": "Ann", "B": "Bob"]

        init(_ policy: AcceptMode = .first) {
            h = EngineHarness(policy)
            _ = h.start()
        }

        /// What this loop turn sends: controller → state.
        func due() -> [String: RobotReport] {
            var out: [String: RobotReport] = [:]
            for (source, report) in reporter.due(engine: h.engine, name: { WireText(self.names[$0] ?? $0) }) {
                #expect(out[source] == nil, "one report per controller per turn")
                out[source] = report
            }
            return out
        }
    }

    @Test func aNewControllerIsToldAtOnceAndARepeatFollowsEveryPing() {
        let rig = Rig()
        rig.reporter.accepted("A")
        let first = rig.due()
        #expect(first["A"]?.state == .free && first["A"]?.board == "sim")
        #expect(rig.due().isEmpty, "nothing changed: nothing sent")
        rig.reporter.pinged("A")
        #expect(rig.due()["A"] == first["A"], "after a pong: the same report, same revision")
    }

    @Test func drivingThenFailsafeOnSilenceInTheTurnItTrips() {
        let rig = Rig()
        rig.reporter.accepted("A")
        _ = rig.due()
        _ = rig.h.send(Self.forward, from: "A", ms: 0)
        #expect(rig.due()["A"]?.state == .failsafe(.startup), "owner, but moving at start-up: centre to start")
        _ = rig.h.send(.neutral, from: "A", ms: 10)
        let driving = rig.due()["A"]
        #expect(driving?.state == .driving)
        _ = rig.h.send(Self.forward, from: "A", ms: 20)
        #expect(rig.due().isEmpty, "states that change nothing the driver sees send nothing")
        _ = rig.h.tick(ms: 269)
        #expect(rig.due().isEmpty)
        _ = rig.h.tick(ms: 270)
        let tripped = rig.due()["A"]
        #expect(tripped?.state == .failsafe(.silence), "the last owner sees FAILSAFE, not FREE")
        #expect(tripped.map { r in driving.map { r.isNewer(than: $0) } ?? false } == true)
        _ = rig.h.send(Self.forward, from: "A", ms: 300)
        #expect(rig.due().isEmpty, "still held: still failsafe")
        _ = rig.h.send(.neutral, from: "A", ms: 310)
        #expect(rig.due()["A"]?.state == .driving)
    }

    @Test func anotherControllerIsToldWhoOwnsTheRobot() {
        let rig = Rig()
        rig.reporter.accepted("A")
        rig.reporter.accepted("B")
        _ = rig.due()
        _ = rig.h.send(.neutral, from: "A", ms: 0)
        let turn = rig.due()
        #expect(turn["A"]?.state == .driving)
        #expect(turn["B"]?.state == .owned(by: "Ann"))
        // A says bye: the robot is free for B.
        rig.reporter.left("A")
        _ = rig.h.engine.released("A", at: rig.h.clock.tick(ms: 5))
        #expect(rig.due()["B"]?.state == .free)
        _ = rig.h.send(.neutral, from: "B", ms: 10)
        #expect(rig.due()["B"]?.state == .driving)
    }

    @Test func underAcceptAnyEveryControllerDrives() {
        let rig = Rig(.any)
        rig.reporter.accepted("A")
        rig.reporter.accepted("B")
        _ = rig.h.send(.neutral, from: "A", ms: 0)
        _ = rig.h.send(.neutral, from: "B", ms: 1)
        let turn = rig.due()
        #expect(turn["A"]?.state == .driving && turn["B"]?.state == .driving)
        _ = rig.h.send(.neutral, from: "A", ms: 2)
        #expect(rig.due().isEmpty, "ownership moving between packets is no news")
    }

    @Test func teacherStopAndRelease() {
        let rig = Rig()
        rig.reporter.accepted("A")
        _ = rig.h.send(.neutral, from: "A", ms: 0)
        _ = rig.due()
        _ = rig.h.engine.teacher(stop: true, at: rig.h.clock.tick(ms: 10))
        #expect(rig.due()["A"]?.state == .teacherStop)
        _ = rig.h.engine.teacher(stop: false, at: rig.h.clock.tick(ms: 20))
        _ = rig.h.send(Self.forward, from: "A", ms: 30)
        #expect(rig.due()["A"]?.state == .failsafe(.teacherRelease))
    }

    @Test func boardMissingAndBack() {
        let rig = Rig()
        rig.reporter.accepted("A")
        _ = rig.h.send(.neutral, from: "A", ms: 0)
        _ = rig.due()
        let lost = BoardEvent.disconnected(device: "/dev/ttyACM0", reason: "unplugged")
        rig.reporter.boardLink(lost)
        _ = rig.h.boardLink(lost, ms: 10)
        #expect(rig.due()["A"]?.state == .boardMissing(why: "/dev/ttyACM0: unplugged"))
        let back = BoardEvent.reconnected(device: "/dev/ttyACM0")
        rig.reporter.boardLink(back)
        _ = rig.h.boardLink(back, ms: 20)
        _ = rig.h.send(.neutral, from: "A", ms: 15)
        #expect(rig.due()["A"]?.state == .failsafe(.boardLink) || rig.h.engine.failsafe.isDriving)
    }

    @Test func controllersGoneWithoutByeAreForgotten() {
        let rig = Rig()
        rig.reporter.accepted("A")
        rig.reporter.accepted("B")
        _ = rig.due()
        let t = rig.h.clock.at(ms: 0)
        rig.reporter.prune(now: t) { $0 == "A" }
        #expect(Set(rig.reporter.sent.keys) == ["A"])
        rig.reporter.accepted("B")
        rig.reporter.prune(now: t + .milliseconds(500)) { $0 == "A" }
        #expect(rig.reporter.sent.keys.contains("B"), "at most once a second")
    }

    @Test func aDenyIsOneRefusedReportWithAFreshRevision() {
        var reporter = RobotStateReporter<String>(board: "sim")
        let a = reporter.denied(.init(reason: .wrongPairingCode, text: "wrong pairing code \"1111\""))
        let b = reporter.denied(.init(reason: .pairingRequired, text: "needs a code"))
        #expect(a.state == .refused(.wrongPairingCode, "wrong pairing code \"1111\""))
        #expect(b.isNewer(than: a))
    }
}
