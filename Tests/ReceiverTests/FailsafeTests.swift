import Receiver
import Testing

@Suite struct FailsafeTests {
    @Test func startsWaitingAndResumesOnlyOnARestingState() {
        let f = FailsafeHarness()
        #expect(f.machine.state == .waitingForNeutral(.startup))
        #expect(f.machine.deadline == nil)
        #expect(f.state(resting: false, ms: 0) == .hold)
        #expect(f.state(resting: false, ms: 10) == .hold)
        #expect(!f.machine.isDriving)
        #expect(f.state(resting: true, ms: 20) == .resume)
        #expect(f.machine.isDriving)
        #expect(f.state(resting: false, ms: 30) == .drive)
        #expect(f.machine.deadline == f.clock.instant(ms: 280))
    }

    @Test func tripsExactlyAtTheTimeoutAndOnlyOnce() {
        let f = FailsafeHarness()
        _ = f.state(resting: true, ms: 0)
        #expect(!f.tick(ms: 249))
        #expect(f.machine.isDriving)
        #expect(f.tick(ms: 250))
        #expect(f.machine.state == .waitingForNeutral(.silence))
        #expect(!f.tick(ms: 251))
        #expect(!f.tick(ms: 10_000))
    }

    @Test func everyAppliedStateRefreshesTheDeadline() {
        let f = FailsafeHarness()
        _ = f.state(resting: true, ms: 0)
        for ms in stride(from: 200, through: 2000, by: 200) {
            #expect(f.state(resting: false, ms: ms) == .drive)
            #expect(!f.tick(ms: ms + 249))
        }
        #expect(f.tick(ms: 2250))
    }

    @Test func afterSilenceMovingStatesAreHeldUntilARestingOne() {
        let f = FailsafeHarness()
        _ = f.state(resting: true, ms: 0)
        _ = f.state(resting: false, ms: 10)
        // A late state after the timeout: the failsafe trips first, then holds it.
        #expect(f.state(resting: false, ms: 300) == .hold)
        #expect(f.machine.state == .waitingForNeutral(.silence))
        for ms in stride(from: 310, through: 1000, by: 20) {
            #expect(f.state(resting: false, ms: ms) == .hold)
        }
        #expect(f.state(resting: true, ms: 1010) == .resume)
        #expect(f.state(resting: false, ms: 1020) == .drive)
    }

    @Test func boardLinkEventsTripAndRequireRestAgain() {
        let f = FailsafeHarness()
        _ = f.state(resting: true, ms: 0)
        #expect(f.trip(.boardLink))
        #expect(f.machine.state == .waitingForNeutral(.boardLink))
        #expect(!f.trip(.boardLink), "tripping while already tripped reports not-driving")
        #expect(f.state(resting: false, ms: 10) == .hold)
        #expect(f.state(resting: true, ms: 20) == .resume)
    }
}
