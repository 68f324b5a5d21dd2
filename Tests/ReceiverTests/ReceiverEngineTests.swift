import BoardLink
import ControlPlane
import PropertyBased
import Receiver
import SystemIO
import RemoteWire
import Testing

/// The whole decision path (counters → ownership → failsafe → mapping) with a manual clock.
@Suite struct ReceiverEngineTests {
    static let forward = ControllerState(angle: 0, buttons: .forward)
    static let left: UInt8 = 0x22, right: UInt8 = 0x23, led1: UInt8 = 0x0F, led2: UInt8 = 0x10
    static let rest: [UInt8: UInt8] = [left: 0, right: 0, led1: 0, led2: 0]

    /// Resting at 0 ms (lifts the start-up failsafe), then forward at 10 ms, from `source`.
    func driving(_ policy: AcceptMode = .first, capacity: Int = 1024, from source: String = "A") -> EngineHarness {
        let h = EngineHarness(policy, capacity: capacity)
        _ = h.start()
        _ = h.send(.neutral, from: source, ms: 0)
        let step = h.send(Self.forward, from: source, ms: 10)
        #expect(step.write == [Self.left: 0xC0, Self.right: 0x40, Self.led1: 0, Self.led2: 0])
        return h
    }

    @Test func startSetsTheBoardToRest() {
        let h = EngineHarness()
        #expect(h.start().write == Self.rest)
        #expect(h.engine.deadlineTick == nil)
    }

    @Test func aMovingStateAtStartUpIsHeldUntilARestingOne() {
        let h = EngineHarness()
        _ = h.start()
        let held = h.send(Self.forward, from: "A", ms: 0)
        #expect(held.write == nil)
        #expect(held.notices == [.tookOwnership("A", previous: nil), .holding("A")])
        // Tilted without throttle still turns on the spot: not resting either.
        #expect(h.send(ControllerState(angle: 0.5), from: "A", ms: 10).write == nil)
        let resumed = h.send(ControllerState(angle: 0.01, buttons: .a), from: "A", ms: 20)
        #expect(resumed.notices == [.resumed("A")])
        #expect(resumed.write == [Self.left: 0, Self.right: 0, Self.led1: 255, Self.led2: 0])
        #expect(h.send(Self.forward, from: "A", ms: 30).write?[Self.left] == 0xC0)
        #expect(h.engine.counters.held == 2 && h.engine.counters.applied == 2)
    }

    /// Issue 20: a receiver that was not scheduled for 400 ms reads, late, the states that came
    /// every 20 ms meanwhile. They arrived in time (their kernel stamps say so): no trip.
    @Test func statesThatWaitedInTheQueueCountFromTheirArrival() {
        let h = driving()
        var step = h.send(Self.forward, from: "A", arrivedMs: 30, readMs: 410)
        for ms in stride(from: 50, through: 410, by: 20) {
            step = h.send(Self.forward, from: "A", arrivedMs: ms, readMs: 410)
            #expect(!step.notices.contains(.failsafe(.silence)), "at \(ms) ms")
        }
        #expect(h.engine.counters.failsafeTrips == 0)
        #expect(h.engine.failsafe.isDriving)
        #expect(h.engine.deadlineTick == h.clock.instantTick(ms: 410 + 250), "the last arrival sets the deadline")
        #expect(step.notices.isEmpty)
    }

    /// The owner's last state waited 200 ms in the queue: its silence, for the failsafe and for
    /// the ownership alike, counts from its arrival. A second controller that starts the moment
    /// the motors stopped for silence takes over then, not the queueing delay later.
    @Test func theOwnershipLapsesWithTheFailsafeWhenTheLastStateWaitedInTheQueue() {
        let h = driving()                                        // A's forward arrived at 10 ms
        _ = h.send(Self.forward, from: "A", arrivedMs: 30, readMs: 230)
        let stop = h.tick(ms: 280)                               // 250 ms after A's last arrival
        #expect(stop.notices.contains(.failsafe(.silence)))
        let b = h.send(.neutral, from: "B", ms: 281)
        #expect(b.notices.contains(.tookOwnership("B", previous: nil)), "\(b.notices)")
        #expect(h.engine.counters.ignored == 0)
    }

    /// The same late read, but the controller really was silent: its next state arrived 300 ms
    /// after the last one, past the failsafe, and trips it — stamps never hide a silence.
    @Test func aStateThatArrivedAfterTheDeadlineStillTrips() {
        let h = driving()
        let late = h.send(Self.forward, from: "A", arrivedMs: 310, readMs: 420)
        #expect(late.notices.first == .failsafe(.silence))
        #expect(late.notices.contains(.holding("A")), "the moving state is held until a resting one")
        #expect(h.engine.counters.failsafeTrips == 1)
    }

    @Test func silenceStopsTheMotorsOnlyAndKeepsTheLEDs() {
        let h = EngineHarness()
        _ = h.start()
        _ = h.send(.neutral, from: "A", ms: 0)
        _ = h.send(ControllerState(angle: 0, buttons: [.forward, .a]), from: "A", ms: 10)
        #expect(h.engine.deadlineTick == h.clock.instantTick(ms: 260))
        #expect(h.tick(ms: 259).write == nil)
        let stop = h.tick(ms: 260)
        #expect(stop.write == [Self.left: 0, Self.right: 0, Self.led1: 255, Self.led2: 0])
        #expect(stop.notices == [.failsafe(.silence), .ownerSilent("A")])
        #expect(h.engine.counters.failsafeTrips == 1)
        #expect(h.engine.wheels == .init(left: 0, right: 0))
        #expect(h.engine.deadlineTick == nil, "nothing to wait for once stopped: the loop sleeps until a packet")
        #expect(h.tick(ms: 400).write == nil, "the stop is written once")
    }

    @Test func afterSilenceTheRobotMovesAgainOnlyAfterARestingState() {
        let h = driving()
        _ = h.tick(ms: 300)
        for ms in stride(from: 310, through: 900, by: 20) {
            #expect(h.send(Self.forward, from: "A", ms: ms).write == nil)
        }
        // Held states keep the controller alive (it keeps ownership) but never drive.
        #expect(h.engine.ownership.owner == "A")
        #expect(h.engine.board[Self.left] == 0 && h.engine.board[Self.right] == 0)
        #expect(h.send(.neutral, from: "A", ms: 910).notices == [.resumed("A")])
        #expect(h.send(Self.forward, from: "A", ms: 920).write?[Self.right] == 0x40)
    }

    @Test(arguments: [
        [0x7F, 0xC0, 0, 0, 0, 0, 0, 1],            // NaN
        [0x7F, 0x80, 0, 0, 0, 0, 0, 1],            // +infinity
        [0xFF, 0x80, 0, 0, 0, 0, 0, 2],            // -infinity
        [0, 0, 0, 0, 0, 0, 0],                     // 7 bytes
        [0, 0, 0, 0, 0, 0, 0, 1, 0],               // 9 bytes
        [],                                        // empty
    ] as [[UInt8]])
    func rejectedPacketsNeverWriteAndDoNotRefreshLiveness(bytes: [UInt8]) {
        let h = driving()
        for ms in stride(from: 20, through: 250, by: 10) {
            #expect(h.send(raw: bytes, from: "A", ms: ms).write == nil)
        }
        // The last valid state came at 10 ms: the failsafe trips at 260 ms regardless.
        #expect(h.tick(ms: 260).notices.first == .failsafe(.silence))
        #expect(h.engine.counters.bad + h.engine.counters.control == 24)
        #expect(h.engine.controllers["A"].map { $0.bad + $0.control } == 24)
    }

    @Test func aSecondControllerCannotDriveWhileTheFirstIsActiveAndTakesOverAfterSilence() {
        let h = driving()
        let spin = ControllerState(angle: 0.7, buttons: .backward)
        let first = h.send(spin, from: "B", ms: 20)
        #expect(first.write == nil && first.notices == [.ignored("B", owner: "A")])
        for ms in stride(from: 30, through: 250, by: 10) {
            let step = h.send(spin, from: "B", ms: ms)
            #expect(step.write == nil && step.notices.isEmpty, "ignored sources are logged once")
        }
        #expect(h.engine.counters.ignored == 24)
        #expect(h.engine.controllers["B"]?.ignored == 24)
        // A was last heard at 10 ms: at 260 ms the failsafe trips and A's ownership lapses.
        let takeover = h.send(spin, from: "B", ms: 260)
        #expect(takeover.write == Self.rest)
        #expect(takeover.notices == [.failsafe(.silence), .ownerSilent("A"), .tookOwnership("B", previous: nil), .holding("B")])
        #expect(h.send(.neutral, from: "B", ms: 270).notices == [.resumed("B")])
        #expect(h.send(spin, from: "B", ms: 280).write?[Self.left] == 0x07)
        #expect(h.send(Self.forward, from: "A", ms: 290).write == nil)
    }

    /// Issue 19: after a failsafe caused by silence the robot stays reserved for its owner for
    /// the reclaim window; the owner takes it back with a resting state, anyone else is ignored
    /// until the window has passed.
    @Test func theReclaimWindowKeepsTheRobotForItsOwnerAfterSilence() {
        let h = EngineHarness(reclaimMs: 3000)
        _ = h.start()
        _ = h.send(.neutral, from: "A", ms: 0)
        _ = h.send(Self.forward, from: "A", ms: 10)
        let rest = ControllerState(angle: 0, buttons: .a)
        // A silent: the failsafe trips at 260 ms, but B (resting, so it would drive at once) is ignored.
        let tripped = h.send(rest, from: "B", ms: 300)
        #expect(tripped.write == Self.rest)
        #expect(tripped.notices == [.failsafe(.silence), .ignored("B", owner: "A")])
        #expect(h.send(rest, from: "B", ms: 3000).write == nil)
        #expect(h.engine.ownership.owner == "A")
        // A comes back within the window: resting first, then it drives.
        #expect(h.send(.neutral, from: "A", ms: 3005).notices == [.resumed("A")])
        #expect(h.send(Self.forward, from: "A", ms: 3010).write?[Self.left] == 0xC0)
        // A silent again (last heard 3010): B is ignored until 3010 + 250 + 3000, then takes over.
        #expect(h.send(rest, from: "B", ms: 4000).notices == [.failsafe(.silence)])
        #expect(h.send(rest, from: "B", ms: 6259).write == nil)
        #expect(h.engine.ownership.owner == "A")
        let takeover = h.send(rest, from: "B", ms: 6260)
        #expect(takeover.notices.contains(.tookOwnership("B", previous: nil)))
        #expect(takeover.write?[Self.led1] == 255)
    }

    @Test func anyPolicyLetsTheLatestControllerDrive() {
        let h = driving(.any)
        let backward = h.send(ControllerState(angle: 0, buttons: .backward), from: "B", ms: 20)
        #expect(backward.notices == [.tookOwnership("B", previous: "A")])
        #expect(backward.write?[Self.left] == 0x40 && backward.write?[Self.right] == 0xC0)
        #expect(h.engine.counters.ignored == 0)
    }

    @Test(arguments: [BoardEvent.reconnected(device: "sim"), .disconnected(device: "sim", reason: "unplugged")])
    func boardLinkEventsStopAndRequireRestAgain(event: BoardEvent) {
        let h = driving()
        let step = h.boardLink(event, ms: 20)
        #expect(step.write == Self.rest)
        #expect(step.notices == [.failsafe(.boardLink)])
        #expect(h.engine.failsafe.state == .waitingForNeutral(.boardLink))
        #expect(h.send(Self.forward, from: "A", ms: 30).write == nil)
        _ = h.send(.neutral, from: "A", ms: 40)
        #expect(h.send(Self.forward, from: "A", ms: 50).write?[Self.left] == 0xC0)
        // Already stopped: the full set is handed again anyway (the board may have restarted).
        _ = h.boardLink(event, ms: 60)
        #expect(h.boardLink(event, ms: 70).write == Self.rest)
        #expect(h.boardLink(.connected(device: "sim"), ms: 80).write == nil)
    }

    @Test func repeatedStatesWriteOnlyOnChange() {
        let h = driving()
        let writesBefore = h.engine.counters.boardWrites
        for ms in stride(from: 20, through: 200, by: 20) {
            #expect(h.send(Self.forward, from: "A", ms: ms).write == nil)
        }
        #expect(h.engine.counters.boardWrites == writesBefore)
        // A state that maps to the same values (tilt inside the deadzone) writes nothing either.
        #expect(h.send(ControllerState(angle: 0.03, buttons: .forward), from: "A", ms: 210).write == nil)
    }

    @Test func shutdownLeavesTheBoardAtRest() {
        let h = driving()
        _ = h.send(ControllerState(angle: 0, buttons: [.forward, .b]), from: "A", ms: 20)
        #expect(h.shutdown() == Self.rest)
        #expect(h.engine.ownership.owner == nil && !h.engine.failsafe.isDriving)
    }

    @Test func theControllerTableIsBoundedAndNeverEvictsTheOwner() {
        let h = driving(capacity: 64)
        for i in 0..<1000 {
            _ = h.send(Self.forward, from: "flood-\(i)", ms: 20 + i % 200)
        }
        #expect(h.engine.controllers.count <= 64)
        #expect(h.engine.controllers.evicted >= 1000 - 64)
        #expect(h.engine.controllers["A"] != nil)
        #expect(h.engine.ownership.owner == "A")
        #expect(h.engine.counters.ignored == 1000)
    }

    @Test func packetsPerSecondCountsTheLastFullSecond() {
        let h = EngineHarness()
        _ = h.start()
        for i in 0..<50 { _ = h.send(.neutral, from: "A", ms: i * 20) }   // 0…980 ms
        _ = h.send(.neutral, from: "A", ms: 1000)
        #expect(h.engine.controllers["A"]?.packetsPerSecond(at: h.clock.instant(ms: 1010)) == 50)
        #expect(h.engine.controllers["A"]?.packetsPerSecond(at: h.clock.instant(ms: 5000)) == 0)
    }

    /// Any mix of datagrams from a few sources: the counters add up, and only a valid state from
    /// the owner ever moves the motors (anything else writes at most a stop).
    @Test func countersAddUpAndOnlyTheOwnersValidStatesMoveTheRobot() async {
        let gen = Gen<UInt8>.value().array(of: 0...11).array(of: 1...200)
        await propertyCheck(count: 300, input: gen) { datagrams in
            let h = EngineHarness()
            _ = h.start()
            for (i, bytes) in datagrams.enumerated() {
                // Sources S0…S3, chosen by the first byte; time moves 0…63 ms per datagram.
                let source = "S\((bytes.first ?? 0) & 3)"
                h.clock.advance(ms: Int(bytes.last ?? 0) & 63)
                let ownerBefore = h.engine.ownership.owner
                let step = h.send(raw: bytes, from: source)
                guard let write = step.write else { continue }
                let moves = write[Self.left] != 0 || write[Self.right] != 0
                if moves {
                    #expect((try? StatePacket.decode(bytes)) != nil, "datagram \(i) moved the robot but is not a valid state")
                    #expect(h.engine.ownership.owner == source)
                    #expect(ownerBefore == source, "a new owner must rest before it moves")
                }
            }
            let c = h.engine.counters
            #expect(c.datagrams == datagrams.count)
            #expect(c.datagrams == c.states + c.bad + c.control)
            #expect(c.states == c.applied + c.held + c.ignored)
        }
    }
}
