import Receiver
import SystemIO
import RemoteWire
import Testing

/// The engine's classroom paths (Protocol.md §7.4, §7.6) with a manual clock: a teacher's
/// stop-all holds every state, a release needs a resting state, a bye frees the robot at once,
/// and an unpaired source never drives.
@Suite struct ClassroomEngineTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)
    static let forwardA = ControllerState(angle: 0, buttons: [.forward, .a])
    static let left: UInt8 = 0x22, right: UInt8 = 0x23, led1: UInt8 = 0x0F, led2: UInt8 = 0x10

    func driving(_ state: ControllerState = forwardA) -> EngineHarness {
        let h = EngineHarness(timeoutMs: 1000)
        _ = h.start()
        _ = h.send(.neutral, from: "A", ms: 0)
        #expect(h.send(state, from: "A", ms: 10).write?[Self.left] == 0xC0)
        return h
    }

    @Test func teacherStopWritesRestAndHoldsEveryStateUntilReleaseThenNeedsRest() {
        let h = driving()
        let stop = h.engine.teacher(stop: true, at: h.clock.tick(ms: 20))
        // Rest values: motors 0 and the LED released too (unlike a failsafe stop).
        #expect(stop.write == [Self.left: 0, Self.right: 0, Self.led1: 0, Self.led2: 0])
        #expect(stop.notices == [.teacher(stopped: true)])
        #expect(h.engine.stoppedByTeacher)
        // Moving and resting states alike are held, from the owner and (as ignored) from others.
        #expect(h.send(Self.forward, from: "A", ms: 30).write == nil)
        #expect(h.send(.neutral, from: "A", ms: 40).write == nil)
        #expect(h.send(Self.forward, from: "B", ms: 50).write == nil)
        #expect(h.engine.counters.held == 2 && h.engine.counters.ignored == 1)
        // The owner keeps its ownership through the hold (its states are signs of life).
        #expect(h.engine.ownership.owner == "A")
        #expect(h.engine.teacher(stop: true, at: h.clock.tick(ms: 60)).notices.isEmpty, "a repeat changes nothing")

        let release = h.engine.teacher(stop: false, at: h.clock.tick(ms: 70))
        #expect(release.write == nil && release.notices == [.teacher(stopped: false)])
        #expect(h.send(Self.forward, from: "A", ms: 80).write == nil, "no automatic resume")
        #expect(h.engine.counters.held == 3)
        #expect(h.send(.neutral, from: "A", ms: 90).notices == [.resumed("A")])
        #expect(h.send(Self.forward, from: "A", ms: 100).write?[Self.left] == 0xC0)
    }

    @Test func teacherStopBeforeAnyControllerStillHolds() {
        let h = EngineHarness()
        _ = h.start()
        #expect(h.engine.teacher(stop: true, at: h.clock.tick(ms: 0)).write == nil, "already at rest: nothing changes")
        #expect(h.send(.neutral, from: "A", ms: 10).write == nil)
        #expect(h.engine.counters.held == 1 && h.engine.counters.applied == 0)
    }

    @Test func byeFromTheOwnerStopsTheMotorsAndFreesTheRobot() {
        let h = driving()
        let bye = h.engine.released("A", at: h.clock.tick(ms: 20))
        #expect(bye.write == [Self.left: 0, Self.right: 0, Self.led1: 255, Self.led2: 0], "motors 0; outputs keep their values")
        #expect(bye.notices == [.ownerLeft("A")])
        #expect(h.engine.ownership.owner == nil)
        #expect(h.engine.counters.failsafeTrips == 0, "a bye is not a failsafe trip")
        // Anyone may take over at once, after a resting state.
        #expect(h.send(Self.forward, from: "B", ms: 30).notices == [.tookOwnership("B", previous: nil), .holding("B")])
        #expect(h.send(.neutral, from: "B", ms: 40).notices == [.resumed("B")])
    }

    @Test func byeFromAnotherSourceChangesNothing() {
        let h = driving()
        let step = h.engine.released("B", at: h.clock.tick(ms: 20))
        #expect(step.write == nil && step.notices.isEmpty)
        #expect(h.engine.ownership.owner == "A")
    }

    @Test func anUnadmittedSourceIsIgnoredEvenWhenTheRobotIsFree() {
        let h = EngineHarness()
        _ = h.start()
        let bytes = StatePacket.encode(.neutral)
        let first = h.engine.datagram(bytes, length: 8, from: "P", at: h.clock.tick(ms: 0), admitted: false)
        #expect(first.notices == [.notAdmitted("P")] && first.write == nil)
        let second = h.engine.datagram(bytes, length: 8, from: "P", at: h.clock.tick(ms: 10), admitted: false)
        #expect(second.notices.isEmpty, "logged once per source")
        #expect(h.engine.ownership.owner == nil)
        #expect(h.engine.counters.ignored == 2 && h.engine.counters.states == 2)
    }

    @Test func limitedDatagramsAreCountedAndNothingElse() {
        let h = driving()
        for _ in 0..<5 { h.engine.limited(from: "F", at: h.clock.tick(ms: 20)) }
        #expect(h.engine.counters.limited == 5 && h.engine.counters.datagrams == 7)
        #expect(h.engine.controllers["F"] == nil, "not a sign of life, not tracked")
        #expect(h.engine.counters.summary(sources: 1, evicted: 0).hasSuffix(" limited=5"))
    }
}
