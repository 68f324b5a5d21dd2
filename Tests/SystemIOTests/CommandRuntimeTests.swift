#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import SystemIO
import Testing

@Suite struct CommandRuntimeTests {
    @Test func eventsPostedFromAnotherThreadComeOutInOrder() throws {
        let runtime = try CommandRuntime<Int>(stopOn: [])
        DispatchQueue.global().async { for i in 1...3 { runtime.mailbox.post(i) } }
        var seen: [Int] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while seen.count < 3, ContinuousClock.now < deadline {
            seen += try runtime.wait(until: deadline).events
        }
        #expect(seen == [1, 2, 3])
        #expect(runtime.stop == nil)
    }

    @Test func aDeadlineWithNothingElseSaysSo() throws {
        let runtime = try CommandRuntime<Int>(stopOn: [])
        let wake = try runtime.wait(until: .now + .milliseconds(20))
        #expect(wake.deadlinePassed)
        #expect(wake.events.isEmpty && wake.stop == nil)
    }

    @Test func theCommandsOwnDescriptorsAreReportedInOrder() throws {
        let runtime = try CommandRuntime<Int>(stopOn: [])
        let idle = try EventFlag(), ready = try EventFlag()
        ready.raise()
        let wake = try runtime.wait([(idle.descriptor.rawValue, .readable), (ready.descriptor.rawValue, .readable)], until: nil)
        #expect(wake.ready.count == 2)
        #expect(wake.ready[0].isEmpty)
        #expect(wake.ready[1].contains(.readable))
        #expect(!wake.deadlinePassed)
    }

    /// SIGURG: nothing else in the tests watches it (SIGUSR1 and SIGUSR2 are taken), and its
    /// default action is to ignore it, so a stray one harms nothing.
    @Test func aStopSignalEndsTheWaitAndStaysSet() throws {
        let runtime = try CommandRuntime<Int>(stopOn: [SIGURG])
        kill(getpid(), SIGURG)
        let wake = try runtime.wait(until: .now + .seconds(10))
        #expect(wake.stop == SIGURG)
        #expect(runtime.stop == SIGURG)
        #expect(try runtime.wait(until: nil).stop == SIGURG)
    }

    @Test func thePolicyIsIntAndTermForEveryCommandAndHangUpForATerminal() {
        #expect(StopSignals.standard == [SIGINT, SIGTERM])
        #expect(StopSignals.terminal == [SIGINT, SIGTERM, SIGHUP])
    }
}
