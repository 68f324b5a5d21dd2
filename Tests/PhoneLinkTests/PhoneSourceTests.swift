import Controller
import PhoneLink
import RemoteWire
import SystemIO
import Testing

/// The phone's input source against a manual clock: states pass, a silent page is neutral after
/// `stale` and ended after `silent`, a stop ends it at once.
struct PhoneSourceTests {
    let t0 = ContinuousClock.now
    let forward = ControllerState(angle: 0.3, buttons: .forward)

    func source(stale: Int = 200, silent: Int = 3000) throws -> PhoneSource {
        PhoneSource(name: "phone \"Ann\"", mailbox: try EventMailbox<PhoneInput>(capacity: 8),
                    timing: .init(stale: .milliseconds(stale), silent: .milliseconds(silent)))
    }

    @Test func statesFromThePagePassInOrder() throws {
        let s = try source()
        #expect(try s.start(now: t0) == [.state(.neutral)])
        s.mailbox.post(.state(forward))
        s.mailbox.post(.state(.neutral))
        #expect(s.read(now: t0 + .milliseconds(10)) == [.state(forward), .state(.neutral)])
    }

    @Test func aSilentPageIsNeutralAfterTheStaleTimeAndStoppedAfterTheSilentTime() throws {
        let s = try source()
        _ = try s.start(now: t0)
        s.mailbox.post(.state(forward))
        _ = s.read(now: t0)
        #expect(s.nextDeadline == t0 + .milliseconds(200))
        #expect(s.deadlinePassed(now: t0 + .milliseconds(199)).isEmpty)
        let stale = s.deadlinePassed(now: t0 + .milliseconds(200))
        #expect(stale.first == .state(.neutral))
        #expect(stale.count == 2, "and a notice: \(stale)")
        #expect(s.nextDeadline == t0 + .milliseconds(3000))
        // The page comes back: its states count again, the stale timer restarts.
        s.mailbox.post(.state(forward))
        #expect(s.read(now: t0 + .milliseconds(500)) == [.state(forward)])
        #expect(s.nextDeadline == t0 + .milliseconds(700))
        _ = s.deadlinePassed(now: t0 + .milliseconds(700))
        let end = s.deadlinePassed(now: t0 + .milliseconds(3500))
        #expect(end == [.end(.deviceLost("phone \"Ann\": no word from the page for 3 s"))])
        #expect(s.nextDeadline == nil)
    }

    @Test func aStopEndsAtOnceAndNothingCountsAfterIt() throws {
        let s = try source()
        _ = try s.start(now: t0)
        s.mailbox.post(.stop("the page was hidden"))
        s.mailbox.post(.state(forward))
        #expect(s.read(now: t0) == [.end(.deviceLost("phone \"Ann\": the page was hidden"))])
        #expect(s.nextDeadline == nil)
    }
}
