#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import SystemIO
import Testing

@Suite struct LoopRunnerTests {
    @Test func eventsPostedFromAnotherThreadComeOutInOrder() throws {
        let runner = try LoopRunner<Int>(stopOn: StopSignals.none)
        DispatchQueue.global().async { for i in 1...3 { runner.mailbox.post(i) } }
        var seen: [Int] = []
        let deadline = Tick.now() + 10_000_000_000
        while seen.count < 3, Tick.now() < deadline {
            seen += try runner.wait(until: deadline).events
        }
        #expect(seen == [1, 2, 3])
        #expect(runner.stop == nil)
    }

    @Test func aDeadlineWithNothingElseEndsTheWaitNoEarlierAndHandsOverThatMoment() throws {
        let runner = try LoopRunner<Int>(stopOn: StopSignals.none)
        let deadline = Tick.now() + 20_000_000
        let wake = try runner.wait(until: deadline)
        #expect(wake.deadlinePassed)
        #expect(wake.now >= deadline)
        #expect(wake.now <= Tick.now())
        #expect(wake.events.isEmpty && wake.stop == nil)
    }

    @Test func aDeadlineAlreadyPastReturnsAtOnce() throws {
        let runner = try LoopRunner<Int>(stopOn: StopSignals.none)
        let wake = try runner.wait(until: Tick.now() + -1_000_000_000)
        #expect(wake.deadlinePassed)
    }

    @Test func anEventEndsAWaitWithoutADeadline() throws {
        let runner = try LoopRunner<String>(stopOn: StopSignals.none)
        runner.mailbox.post("hello")
        let wake = try runner.wait(until: nil)
        #expect(wake.events == ["hello"])
        #expect(!wake.deadlinePassed)
        #expect(wake.stop == nil)
    }

    @Test func theLoopsOwnDescriptorsAreReportedInOrder() throws {
        let runner = try LoopRunner<Int>(stopOn: StopSignals.none)
        let idle = try EventFlag(), ready = try EventFlag()
        ready.raise()
        let wake = try runner.wait([(idle.descriptor.rawValue, .readable), (ready.descriptor.rawValue, .readable)], until: nil)
        #expect(wake.ready.count == 2)
        #expect(wake.ready[0].isEmpty)
        #expect(wake.ready[1].contains(.readable))
        #expect(!wake.deadlinePassed)
    }

    /// SIGURG: nothing else in the tests watches it (SIGUSR1 and SIGUSR2 are taken), and its
    /// default action is to ignore it, so a stray one harms nothing.
    @Test func aStopSignalEndsTheWaitAndStaysSet() throws {
        let runner = try LoopRunner<Int>(stopOn: [SIGURG])
        kill(getpid(), SIGURG)
        let wake = try runner.wait(until: Tick.now() + 10_000_000_000)
        #expect(wake.stop == SIGURG)
        #expect(!wake.deadlinePassed)
        #expect(runner.stop == SIGURG)
        #expect(try runner.wait(until: nil).stop == SIGURG)
    }

    @Test func aStopRequestedFromAnotherThreadEndsAWaitThatHasNothingElseToWaitFor() throws {
        let runner = try LoopRunner<Int>(stopOn: StopSignals.none)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { runner.requestStop() }
        let wake = try runner.wait(until: nil)
        #expect(wake.stop == SIGTERM)
        #expect(runner.stop == SIGTERM)
    }

    @Test func theFirstStopWinsAndEveryLaterWaitReturnsAtOnce() throws {
        let runner = try LoopRunner<Int>(stopOn: StopSignals.none)
        runner.requestStop(as: SIGINT)
        runner.requestStop(as: SIGTERM)
        #expect(runner.stop == SIGINT)
        for _ in 0..<3 {
            let wake = try runner.wait(until: Tick.now() + 10_000_000_000)
            #expect(wake.stop == SIGINT && !wake.deadlinePassed)
        }
    }

    @Test func theStopDescriptorTurnsReadableOnTheStop() throws {
        let runner = try LoopRunner<Int>(stopOn: StopSignals.none)
        #expect(try Poller.wait(for: runner.stopDescriptor, events: .readable, timeout: .zero).isEmpty)
        runner.requestStop()
        #expect(try Poller.wait(for: runner.stopDescriptor, events: .readable, timeout: .zero).contains(.readable))
    }

    @Test func anInstantDeadlineIsTheSameMomentAsItsTick() throws {
        let runner = try LoopRunner<Int>(stopOn: StopSignals.none)
        let deadline = ContinuousClock.now + .milliseconds(10)
        let wake = try runner.wait(untilInstant: deadline)
        #expect(wake.deadlinePassed)
        #expect(wake.now.instant >= deadline)
    }

    @Test func theEarliestDeadlineIgnoresTheUnset() {
        let a = Tick(nanoseconds: 5), b = Tick(nanoseconds: 3)
        #expect(Tick.earliest(nil, a, nil, b) == b)
        #expect(Tick.earliest(a) == a)
        #expect(Tick.earliest(nil, nil) == nil)
    }

    @Test func thePolicyIsIntAndTermForEveryCommandAndHangUpForATerminal() {
        #expect(StopSignals.standard == [SIGINT, SIGTERM])
        #expect(StopSignals.terminal == [SIGINT, SIGTERM, SIGHUP])
        #expect(StopSignals.none.isEmpty)
    }
}
