@testable import Controller
import PropertyBased
import RemoteWire
import SystemIO
import Testing

/// The send cadence, driven by a manual clock: instants are built from one origin, nothing sleeps.
@Suite struct SendScheduleTests {
    let t0 = Tick.now()
    func at(_ ms: Int) -> Tick { t0 + Int64(ms) * 1_000_000 }

    let forward = ControllerState(angle: 0, buttons: .forward)
    let left = ControllerState(angle: -0.3, buttons: [.forward, .a])

    func sent(_ actions: [SendSchedule.Action]) -> [ControllerState] {
        actions.compactMap { if case .send(let s) = $0 { s } else { nil } }
    }

    @Test func startSendsTheInitialStateAtOnce() {
        var s = SendSchedule(.init(rate: 50))
        #expect(s.deadline == nil)
        #expect(s.start(now: at(0)) == [.send(.neutral)])
        #expect(s.deadline == at(20))
        #expect(s.start(now: at(1)) == [], "a second start sends nothing")
    }

    @Test func aStateGivenBeforeStartIsTheFirstPacket() {
        var s = SendSchedule(.init(rate: 50))
        #expect(s.update(forward, now: at(0)) == [])
        #expect(s.start(now: at(0)) == [.send(forward)])
    }

    @Test func aChangeIsSentAtOnceNotAtTheNextPeriod() {
        var s = SendSchedule(.init(rate: 1))
        _ = s.start(now: at(0))
        #expect(s.update(forward, now: at(10)) == [.send(forward)])
        #expect(s.update(left, now: at(30)) == [.send(left)])
        #expect(s.deadline == at(1030), "the period restarts at the last send")
    }

    @Test func anUnchangedStateIsNotSentAgainEarly() {
        var s = SendSchedule(.init(rate: 50))
        _ = s.start(now: at(0))
        _ = s.update(forward, now: at(5))
        #expect(s.update(forward, now: at(10)) == [])
        #expect(s.advance(now: at(24)) == [])
        #expect(s.advance(now: at(25)) == [.send(forward)])
    }

    @Test func negativeZeroDiffersFromZeroOnTheWire() {
        var s = SendSchedule(.init(rate: 50))
        _ = s.start(now: at(0))
        let negativeZero = ControllerState(angle: -0.0, buttons: [])
        #expect(s.update(negativeZero, now: at(3)) == [.send(negativeZero)])
    }

    @Test func resendsKeepTheirRateOverTenSeconds() {
        var s = SendSchedule(.init(rate: 50))
        var count = sent(s.start(now: at(0))).count
        // Wake at every deadline, always 3 ms late: the grid must not drift.
        while let d = s.deadline, d < at(10_000) {
            count += sent(s.advance(now: d + 3_000_000)).count
        }
        #expect(count == 500)
    }

    @Test func aLongStallSkipsMissedResendsInsteadOfBursting() {
        var s = SendSchedule(.init(rate: 50))
        _ = s.start(now: at(0))
        #expect(sent(s.advance(now: at(500))).count == 1)
        #expect(s.deadline == at(520))
        #expect(s.advance(now: at(500)) == [])
    }

    @Test func aSlightlyLateWakeUpCatchesUpOneResend() {
        var s = SendSchedule(.init(rate: 50))
        _ = s.start(now: at(0))
        #expect(sent(s.advance(now: at(45))).count == 1)   // due at 20, late by more than a period
        #expect(s.deadline == at(40))
        #expect(sent(s.advance(now: at(45))).count == 1)
        #expect(s.deadline == at(60))
    }

    @Test func changesInsideTheMinimumGapAreCoalescedLatestWins() {
        var s = SendSchedule(.init(period: .milliseconds(20), minimumGap: .milliseconds(2)))
        _ = s.start(now: at(0))
        #expect(s.update(forward, now: at(10)) == [.send(forward)])
        #expect(s.update(left, now: at(11)) == [])
        let last = ControllerState(angle: 0.2, buttons: .b)
        #expect(s.update(last, now: at(11)) == [])
        #expect(s.deadline == at(12))
        #expect(s.advance(now: at(12)) == [.send(last)])
        #expect(s.deadline == at(32))
    }

    @Test func stopSendsNeutralThreeTimesSpacedThenFinishes() {
        var s = SendSchedule(.init(rate: 50))
        _ = s.start(now: at(0))
        _ = s.update(forward, now: at(1))
        #expect(s.stop(.endOfInput, now: at(7)) == [.send(.neutral)])
        #expect(s.isStopping && !s.isFinished)
        #expect(s.update(left, now: at(8)) == [], "input after stop is ignored")
        #expect(s.stop(.quit, now: at(8)) == [], "the first reason wins")
        #expect(s.deadline == at(12))
        #expect(s.advance(now: at(11)) == [])
        #expect(s.advance(now: at(12)) == [.send(.neutral)])
        #expect(s.advance(now: at(17)) == [.send(.neutral), .finish(.endOfInput)])
        #expect(s.isFinished && s.deadline == nil)
        #expect(s.advance(now: at(100)) == [])
    }

    @Test func aStateStillWaitingForTheGapGoesOutBeforeTheNeutralOnes() {
        var s = SendSchedule(.init(period: .milliseconds(20), minimumGap: .milliseconds(2), neutralSpacing: .zero))
        _ = s.start(now: at(0))
        _ = s.update(forward, now: at(10))
        #expect(s.update(left, now: at(11)) == [])
        #expect(s.stop(.scriptFinished, now: at(11)) == [.send(left), .send(.neutral), .send(.neutral), .send(.neutral), .finish(.scriptFinished)])
    }

    @Test func aStateGivenBeforeStartGoesOutBeforeTheNeutralOnes() {
        var s = SendSchedule(.init(period: .milliseconds(20), neutralSpacing: .zero))
        _ = s.update(forward, now: at(0))
        #expect(s.stop(.scriptFinished, now: at(0)) == [.send(forward), .send(.neutral), .send(.neutral), .send(.neutral), .finish(.scriptFinished)])
        var n = SendSchedule(.init(period: .milliseconds(20), neutralSpacing: .zero))
        #expect(n.stop(.endOfInput, now: at(0)).count == 4, "nothing extra for a neutral start")
    }

    @Test func stopWithoutSpacingSendsAllAtOnce() {
        var s = SendSchedule(.init(period: .milliseconds(20), neutralSpacing: .zero))
        _ = s.start(now: at(0))
        #expect(s.stop(.signal(15), now: at(1)) == [.send(.neutral), .send(.neutral), .send(.neutral), .finish(.signal(15))])
    }

    @Test func aLateWakeUpWhileStoppingSendsWhatIsDue() {
        var s = SendSchedule(.init(rate: 50))
        _ = s.start(now: at(0))
        _ = s.stop(.quit, now: at(0))
        #expect(s.advance(now: at(50)) == [.send(.neutral), .send(.neutral), .finish(.quit)])
    }

    @Test(arguments: [1.0, 50, 333, 1000])
    func rateGivesThePeriod(rate: Double) {
        let c = SendSchedule.Configuration(rate: rate)
        #expect(abs(Double(c.period.components.attoseconds) / 1e18 + Double(c.period.components.seconds) - 1 / rate) < 1e-9)
        #expect(c.minimumGap <= c.period)
    }

    /// Random inputs at random times, the loop waking at every deadline or input: while running,
    /// the wire is never silent for more than a period, every final state gets out within the
    /// minimum gap, and the way out is exactly three neutrals.
    @Test func invariantsHoldForRandomInputs() async {
        let events = Gen.int(in: 0...(1 << 20)).array(of: 1...60)
        await propertyCheck(count: 200, input: events) { codes in
            let config = SendSchedule.Configuration(period: .milliseconds(20), minimumGap: .milliseconds(2))
            var s = SendSchedule(config)
            var log: [(Tick, ControllerState)] = []
            var finished: EndReason?
            func run(_ actions: [SendSchedule.Action], _ now: Tick) {
                for a in actions {
                    switch a {
                    case .send(let state): log.append((now, state))
                    case .finish(let r): finished = r
                    }
                }
            }
            var now = at(0)
            run(s.start(now: now), now)
            var lastInput = ControllerState.neutral
            for code in codes {
                let next = now + Int64(code % 50_000) * 1_000
                while let d = s.deadline, d <= next {
                    now = max(now, d)
                    run(s.advance(now: now), now)
                }
                now = next
                let state = ControllerState(angle: Float(code % 7) / 10, buttons: Buttons(rawValue: UInt32(code % 3)))
                lastInput = state
                run(s.update(state, now: now), now)
            }
            // Let everything due go out, then check the latest input is the latest packet.
            while let d = s.deadline, d <= now + 2_000_000 {
                now = max(now, d)
                run(s.advance(now: now), now)
            }
            #expect(SendSchedule.sameOnTheWire(log.last!.1, lastInput))
            for (a, b) in zip(log, log.dropFirst()) {
                #expect(b.0 - a.0 <= Tick.nanoseconds(config.period))
                #expect(b.0 - a.0 >= Tick.nanoseconds(config.minimumGap))
            }
            let before = log.count
            run(s.stop(.quit, now: now), now)
            while let d = s.deadline { run(s.advance(now: d), d) }
            #expect(finished == .quit)
            #expect(log.count - before == 3)
            #expect(log.suffix(3).allSatisfy { $0.1 == .neutral })
        }
    }
}
