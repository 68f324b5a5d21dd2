@testable import Controller
import Console
@testable import Discovery
import Foundation
import Logging
import RemoteWire
import Synchronization
import SystemIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A receiver as the session browser would report it, reachable at a PacketCapture.
struct AnnouncedReceiver {
    var name: String
    var session = "class-3b"
    var peer = "00000000000000aa"
    var address: SocketAddress
    var timing = TimingContract.standard
    var interface: UInt32 = 1

    init(_ name: String, at capture: PacketCapture, timing: TimingContract = .standard) throws {
        self.name = name
        self.address = try SocketAddress.resolve(capture.peer)
        self.timing = timing
    }

    var key: ServiceKey { ServiceKey(name: name, interface: interface) }

    /// found, resolved, addresses: a receiver that is there.
    func appears() throws -> [BrowserEvent] {
        let announcement = ReceiverAnnouncement(session: try SessionID(session), peer: peer, displayName: name, timing: timing)
        return [.found(key), .resolved(key, host: "robot-pc.local.", port: address.port, txt: announcement.txtRecord.encoded),
                .addresses(key, [address])]
    }
}

/// `control --session` without a daemon: the follower gets the events a browser would report
/// through its mailbox, and drives a real send loop whose packets land in PacketCaptures.
@Suite struct SessionFollowerTests {
    final class Outcome: Sendable {
        let reason = Mutex<Result<EndReason, any Error>?>(nil)
    }

    /// The follower is used by one thread at a time: the test's, then the send loop's (which
    /// holds the lock while it runs), then the test's again.
    final class Held: Sendable {
        let follower: Mutex<SessionFollower>
        init(_ f: sending SessionFollower) { follower = Mutex(f) }
    }

    /// How long ago the receiver last answered, as the test sets it.
    final class LinkSilence: Sendable {
        let value: Mutex<Duration>
        init(_ d: Duration) { value = Mutex(d) }
    }

    struct Rig {
        let destination: Destination
        let mailbox: EventMailbox<BrowserEvent>
        let held: Held

        /// `silence`: the control session's view of the link (``SessionFollower/linkSilence``).
        init(receiver: String? = nil, rate: Double? = nil, silence: LinkSilence? = nil) throws {
            destination = try Destination(nil)
            mailbox = try EventMailbox<BrowserEvent>()
            let follower = SessionFollower(target: SessionTarget(session: try SessionID("class-3b"), receiver: receiver, requestedRate: rate),
                                           destination: destination, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                                           status: StatusLine(quiet: true), settle: .milliseconds(50), mailbox: mailbox)
            if let silence { follower.linkSilence = { _ in silence.value.withLock { $0 } } }
            held = Held(follower)
        }

        func chooseAtStart(interactive: Bool) throws(CommandFailure) {
            try held.follower.withLock { (f) throws(CommandFailure) in try f.chooseAtStart(interactive: interactive) }
        }
        var failure: CommandFailure? { held.follower.withLock { $0.failure } }
        func stop() { held.follower.withLock { $0.stop() } }

        func post(_ events: [BrowserEvent]) { for e in events { mailbox.post(e) } }

        /// Starts the follower's thread and a send loop reading `ANGLE BUTTONS` lines from a pipe.
        func startLoop(rate: Double = 50) throws -> (write: Int32, outcome: Outcome) {
            var fds: [Int32] = [-1, -1]
            try #require(pipe(&fds) == 0)
            let (readEnd, writeEnd) = (fds[0], fds[1])
            let outcome = Outcome()
            let signals = try SignalWatcher(signals: [])
            let (destination, held) = (destination, held)
            Thread {
                let result = held.follower.withLock { follower in
                    var loop = SendLoop(source: StdinSource(fd: readEnd, name: "pipe"), destination: destination,
                                        schedule: .init(rate: rate),
                                        signals: signals, status: StatusLine(quiet: true))
                    loop.companions = [follower]
                    return Result { try loop.run() }
                }
                close(readEnd)
                outcome.reason.withLock { $0 = result }
            }.start()
            return (writeEnd, outcome)
        }
    }

    func write(_ fd: Int32, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    func waitForEnd(_ outcome: Outcome) -> Result<EndReason, any Error>? {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if let r = outcome.reason.withLock({ $0 }) { return r }
            usleep(2_000)
        }
        return nil
    }

    @Test func theOnlyReceiverIsDrivenAtThePeriodItsContractAsksFor() throws {
        let capture = try PacketCapture()
        // rate 4 Hz, failsafe 2 s: period 250 ms (its rate), not the standard 20 ms.
        let robot = try AnnouncedReceiver("robot", at: capture, timing: TimingContract(failsafeMilliseconds: 2000, rateHz: 4))
        let rig = try Rig()
        rig.post(try robot.appears())
        try rig.chooseAtStart(interactive: false)
        let peer = try #require(rig.destination.current)
        #expect(peer.address == robot.address && peer.period == .milliseconds(250) && peer.label == "\"robot\"")
        #expect(rig.destination.note == "following \"robot\" at \(robot.address) (connecting)")

        let (input, outcome) = try rig.startLoop()
        let state = ControllerState(angle: 0.2, buttons: .a)
        write(input, "0.2 a\n")
        #expect(try capture.waitFor(state))
        #expect(eventually { rig.destination.note == "following \"robot\" at \(robot.address) (connected)" },
                "\(rig.destination.note ?? "nil")")
        // Resends of an unchanged state for one second: about 4 at 250 ms (50 at the standard rate).
        let from = ContinuousClock.now
        var resends = 0
        while ContinuousClock.now - from < .seconds(1) {
            if try capture.next(timeout: .seconds(1) - (ContinuousClock.now - from)) != nil { resends += 1 }
        }
        #expect((2...8).contains(resends), "\(resends) packets in 1 s")

        close(input)
        #expect(try waitForEnd(outcome)?.get() == .endOfInput)
        rig.stop()
        try capture.drain()
        #expect(capture.states.suffix(3) == [.neutral, .neutral, .neutral])
    }

    @Test func aReceiverBackOnAnotherPortIsFollowedWithoutARestart() throws {
        let first = try PacketCapture(), second = try PacketCapture()
        // 1 Hz asked for and accepted by the receiver's contract: resends are a second apart.
        let slow = TimingContract(failsafeMilliseconds: 5000, rateHz: 1)
        let rig = try Rig(receiver: "robot", rate: 1)
        rig.post(try AnnouncedReceiver("robot", at: first, timing: slow).appears())
        try rig.chooseAtStart(interactive: false)
        let (input, outcome) = try rig.startLoop(rate: 1)
        let state = ControllerState(angle: -0.4, buttons: .forward)
        write(input, "-0.4 forward\n")
        #expect(try first.waitFor(state))

        rig.post([.lost(try AnnouncedReceiver("robot", at: first, timing: slow).key)])
        #expect(eventually { rig.destination.current == nil })
        #expect(rig.destination.note == "receiver \"robot\" gone — looking in session \"class-3b\"")
        try first.drain()   // whatever was in flight; nothing more may come

        let back = ContinuousClock.now
        rig.post(try AnnouncedReceiver("robot", at: second, timing: slow).appears())
        // The next resend may be up to a second away: the new port is served at once instead.
        #expect(try second.waitFor(state, timeout: .seconds(3)))
        #expect(ContinuousClock.now - back < .milliseconds(800))
        #expect(rig.destination.current?.period == .seconds(1))
        #expect(eventually { rig.destination.note?.hasSuffix("(connected)") ?? false })
        #expect(try first.next(timeout: .milliseconds(100)) == nil, "the old port gets nothing after the move")

        close(input)
        #expect(try waitForEnd(outcome)?.get() == .endOfInput)
        rig.stop()
        try second.drain()
        #expect(second.states.suffix(3) == [.neutral, .neutral, .neutral])
    }

    /// An mDNS responder restarting on the robot withdraws its name for a second or two; a
    /// receiver that still answers the controller's pings keeps being driven (no failsafe
    /// trip), and one that stops answering as well is then given up.
    @Test func aWithdrawnReceiverThatStillAnswersKeepsBeingDriven() throws {
        let capture = try PacketCapture()
        let robot = try AnnouncedReceiver("robot", at: capture)
        let silence = LinkSilence(.milliseconds(200))
        let rig = try Rig(receiver: "robot", silence: silence)
        rig.post(try robot.appears())
        try rig.chooseAtStart(interactive: false)
        let (input, outcome) = try rig.startLoop()
        let state = ControllerState(angle: 0.3, buttons: .forward)
        write(input, "0.3 forward\n")
        #expect(try capture.waitFor(state))

        rig.post([.lost(robot.key)])
        #expect(eventually { rig.destination.note?.contains("gone") ?? false }, "\(rig.destination.note ?? "nil")")
        #expect(rig.destination.current?.address == robot.address, "still sending to the robot")
        // A new input after the goodbye reaches the robot.
        write(input, "0.1 a\n")
        #expect(try capture.waitFor(ControllerState(angle: 0.1, buttons: .a)), "states go on after the goodbye")

        // Back in DNS-SD at the same address: nothing changes for the driver.
        rig.post(try robot.appears())
        #expect(eventually { rig.destination.note?.hasSuffix("(connected)") ?? false }, "\(rig.destination.note ?? "nil")")
        #expect(rig.destination.current?.address == robot.address)

        // Withdrawn again, and this time silent too: given up.
        rig.post([.lost(robot.key)])
        #expect(eventually { rig.destination.note?.contains("gone") ?? false })
        #expect(rig.destination.current != nil)
        silence.value.withLock { $0 = .milliseconds(2500) }
        #expect(eventually { rig.destination.current == nil }, "a withdrawn receiver that does not answer is given up")

        close(input)
        #expect(try waitForEnd(outcome)?.get() == .endOfInput)
        rig.stop()
    }

    @Test func severalReceiversAtStartWithoutATerminalFailWithExitSix() throws {
        let a = try PacketCapture(), b = try PacketCapture()
        let rig = try Rig()
        rig.post(try AnnouncedReceiver("robot-a", at: a).appears() + AnnouncedReceiver("robot-b", at: b).appears())
        do {
            try rig.chooseAtStart(interactive: false)
            Issue.record("no error for two receivers")
        } catch {
            #expect(error.kind == .ambiguousReceiver)
            #expect(error.message == "2 receivers in session \"class-3b\" and none chosen: pick one with --receiver NAME")
        }
        #expect(rig.destination.current == nil)
    }

    /// The followed receiver leaves while two others are there: after the switch grace (2 s)
    /// there is no only one to follow, and without a terminal the run ends with exit status 6.
    @Test func severalReceiversLeftWhileRunningEndTheRunWithExitSix() throws {
        let a = try PacketCapture(), b = try PacketCapture(), c = try PacketCapture()
        let rig = try Rig()
        rig.post(try AnnouncedReceiver("robot-a", at: a).appears())
        try rig.chooseAtStart(interactive: false)
        let (input, outcome) = try rig.startLoop()
        write(input, "0 b\n")
        #expect(try a.waitFor(ControllerState(angle: 0, buttons: .b)))
        rig.post(try AnnouncedReceiver("robot-b", at: b).appears() + AnnouncedReceiver("robot-c", at: c).appears())
        rig.post([.lost(try AnnouncedReceiver("robot-a", at: a).key)])
        let result = waitForEnd(outcome)
        #expect(try result?.get() == .quit)
        #expect(rig.failure?.kind == .ambiguousReceiver)
        #expect(try b.next(timeout: .milliseconds(50)) == nil && c.next(timeout: .milliseconds(50)) == nil)
        close(input)
        rig.stop()
    }

    @Test func theReceiverNamedIsFollowedAtOnceAndTheOthersOnlyListed() throws {
        let a = try PacketCapture(), b = try PacketCapture()
        let rig = try Rig(receiver: "robot-b")
        rig.post(try AnnouncedReceiver("robot-a", at: a).appears() + AnnouncedReceiver("robot-b", at: b).appears())
        let started = ContinuousClock.now
        try rig.chooseAtStart(interactive: false)
        #expect(ContinuousClock.now - started < .milliseconds(50), "with a name there is nothing to wait for")
        let wanted = try SocketAddress.resolve(b.peer)
        #expect(rig.destination.current?.address == wanted)
        rig.stop()
    }

    @Test(arguments: [("2", "robot-b"), (" 1 ", "robot-a"), ("robot-b", "robot-b"), ("00000000000000aa", "robot-a"),
                      ("3", nil), ("0", nil), ("robot", nil), ("", nil)] as [(String, String?)])
    func anAnswerPicksByNumberNameOrPeerID(answer: String, picked: String?) throws {
        let a = try PacketCapture(), b = try PacketCapture()
        var first = try AnnouncedReceiver("robot-a", at: a)
        var second = try AnnouncedReceiver("robot-b", at: b)
        first.peer = "00000000000000aa"
        second.peer = "00000000000000bb"
        func receiver(_ r: AnnouncedReceiver) throws -> DiscoveredReceiver {
            DiscoveredReceiver(name: r.name, announcement: ReceiverAnnouncement(session: try SessionID(r.session), peer: r.peer, displayName: r.name),
                     host: "h.local.", port: r.address.port, addresses: [r.address], interfaces: [1], notes: [])
        }
        let list = [try receiver(first), try receiver(second)]
        #expect(ReceiverChoice.pick(answer, from: list)?.name == picked)
    }
}

@Suite struct SessionCadenceTests {
    @Test func aNewPeriodTakesEffectFromTheLastSend() {
        let t0 = Tick.now()
        var s = SendSchedule(.init(period: .milliseconds(100)))
        #expect(s.start(now: t0) == [.send(.neutral)])
        #expect(s.deadline == t0 + 100_000_000)
        s.setPeriod(.milliseconds(20))
        #expect(s.configuration.period == .milliseconds(20))
        #expect(s.deadline == t0 + 20_000_000)
        #expect(s.advance(now: t0 + 20_000_000) == [.send(.neutral)])
        #expect(s.deadline == t0 + 40_000_000)
        // Slower again: the next resend moves out only from the next send on.
        s.setPeriod(.milliseconds(200))
        #expect(s.deadline == t0 + 40_000_000)
        #expect(s.advance(now: t0 + 40_000_000) == [.send(.neutral)])
        #expect(s.deadline == t0 + 240_000_000)
    }

    @Test(arguments: [
        // failsafe, rate, --rate (Hz) → period (ms)
        (250, 50, nil, 20.0), (250, 50, 100, 10.0), (50, 20, 20, 10.0), (1000, 30, 10, 1000.0 / 30),
        (2000, 4, 2.5, 250.0), (2000, 1, 2.5, 400.0),
    ] as [(Int, Int, Double?, Double)])
    func theControllersPeriodFollowsProtocolSection63(failsafe: Int, rate: Int, requested: Double?, periodMs: Double) throws {
        let target = SessionTarget(session: try SessionID("s"), receiver: nil, requestedRate: requested)
        let plan = SendCadence.plan(requestedPeriod: target.requestedPeriod,
                                    receiver: TimingContract(failsafeMilliseconds: failsafe, rateHz: rate))
        let ms = Double(plan.period.components.attoseconds) / 1e15 + Double(plan.period.components.seconds) * 1000
        #expect(abs(ms - periodMs) < 0.001, "\(plan)")
        #expect(plan.honoursFailsafe)
    }

    @Test func theStatusLineShowsTheFollowersNote() throws {
        let address = try SocketAddress.resolve("127.0.0.1:5000")
        let line = StatusReport.line(peer: .init(address: address, label: "\"robot\"", period: .milliseconds(20)),
                                     note: "following \"robot\" at 127.0.0.1:5000 (connected)",
                                     state: .neutral, rate: 50, input: "stdin", stopping: false, sendError: nil)
        #expect(line.hasPrefix("→ following \"robot\" at 127.0.0.1:5000 (connected)  ["))
    }
}
