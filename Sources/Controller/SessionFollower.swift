#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
public import Console
public import Discovery
import Foundation
public import Logging
import Synchronization
import SystemIO

/// What `control --session ID [--receiver NAME]` asked for.
public struct SessionTarget: Sendable {
    public var session: SessionID
    /// An instance name or a peer id; nil = the only receiver of the session.
    public var receiver: String?
    /// `--rate` when the person gave it; nil lets the receiver's timing contract decide.
    public var requestedRate: Double?

    public init(session: SessionID, receiver: String?, requestedRate: Double?) {
        self.session = session
        self.receiver = receiver
        self.requestedRate = requestedRate
    }

    /// The user's request as a period, for ``SendCadence``.
    var requestedPeriod: Duration? {
        requestedRate.map { .nanoseconds(Int64((1e9 / $0).rounded())) }
    }
}

/// The controller's side of a session: browses the session (``SessionBrowser``), runs
/// ``FollowReceiver`` on what it sees, and points the send loop's ``Destination`` at the
/// receiver it follows — with the resend period of that receiver's timing contract
/// (``SendCadence``). GameKit's peer states go to the log and, through ``Destination/note``,
/// to the status line.
///
/// Life cycle (what `ControlCommand` does):
/// 1. `init` starts browsing; no mDNS responder → ``DiscoveryError`` (exit status 5 in the CLI).
/// 2. ``chooseAtStart(interactive:)`` (on the caller's thread, before the input starts): waits
///    for the settle window; several receivers and no `--receiver` → asks on a terminal, or
///    lists them and throws exit status 6.
/// 3. ``start()`` runs the rest on a small thread of its own: it sleeps in poll(2) on the
///    browser's mailbox, the destination's "first packet sent" flag and FollowReceiver's next
///    deadline, so the send loop needs no change to follow a session.
/// 4. ``wrap(_:)`` gives the send loop an input source that ends the run when following fails
///    for good (the followed receiver left, several others remain, and nobody can be asked);
///    ``failure`` then holds the error to exit with. ``stop()`` ends the thread and the browsing.
public final class SessionFollower: Sendable {
    public let target: SessionTarget
    private let destination: Destination
    private let logger: Logger
    private let status: StatusLine
    private let mailbox: EventMailbox<BrowserEvent>
    private let browser: SessionBrowser?
    private let follow: Mutex<FollowReceiver>
    private let startedAt: ContinuousClock.Instant
    private let settle: Duration
    private let interactive = Atomic<Bool>(false)
    private let failed = Mutex<UserFacingError?>(nil)
    private let stopRequest: EventFlag
    private let finished: EventFlag
    private let running = Atomic<Bool>(false)

    /// Starts browsing the session. No mDNS responder: ``DiscoveryError`` (the CLI says exit status
    /// 5, with `--peer` as the way round).
    public convenience init(target: SessionTarget, destination: Destination, logger: Logger, status: StatusLine,
                            settle: Duration = .milliseconds(500)) throws {
        let mailbox: EventMailbox<BrowserEvent>
        do {
            mailbox = try EventMailbox<BrowserEvent>()
        } catch {
            throw UserFacingError("control: \(error)", status: .failure)
        }
        let browser: SessionBrowser
        do throws(DiscoveryError) {
            browser = try SessionBrowser(session: target.session, lookups: .once,
                                         interest: FollowReceiver.interest(receiverName: target.receiver, session: target.session),
                                         onEvent: mailbox.post)
        } catch {
            throw error
        }
        try self.init(target: target, destination: destination, logger: logger, status: status, settle: settle,
                      mailbox: mailbox, browser: browser)
    }

    /// `browser` nil: the events are posted to `mailbox` by someone else (tests post what a
    /// browser would report).
    init(target: SessionTarget, destination: Destination, logger: Logger, status: StatusLine, settle: Duration,
         mailbox: EventMailbox<BrowserEvent>, browser: SessionBrowser?) throws(UserFacingError) {
        self.target = target
        self.destination = destination
        self.logger = logger
        self.status = status
        self.settle = settle
        self.mailbox = mailbox
        self.browser = browser
        do {
            stopRequest = try EventFlag()
            finished = try EventFlag()
        } catch {
            throw UserFacingError("control: \(error)", status: .failure)
        }
        startedAt = .now
        follow = Mutex(FollowReceiver(.init(session: target.session, receiverName: target.receiver, settle: settle),
                                      now: startedAt))
        destination.note = follow.withLock { $0.summary }
        logger.info("looking for receivers", metadata: [
            "session": "\(target.session)", "subtype": "\(target.session.subtype)",
            "receiver": "\(target.receiver ?? "(the only one)")",
        ])
    }

    deinit { stop() }

    /// Set once following failed for good; the command exits with it.
    public var failure: UserFacingError? { failed.withLock { $0 } }

    /// Waits out the settle window (without `--receiver`), so that the choice between several
    /// receivers is made before the input starts. `interactive`: stdin is a terminal, so a
    /// person can be asked; otherwise several receivers end the command with exit status 6.
    public func chooseAtStart(interactive: Bool) throws(UserFacingError) {
        self.interactive.store(interactive, ordering: .relaxed)
        guard target.receiver == nil else { return }
        let settled = startedAt + settle
        status.update("→ \(follow.withLock { $0.summary })", force: true)
        while true {
            let now = ContinuousClock.now
            let wake = [follow.withLock { $0.nextDeadline }, settled].compactMap { $0 }.min()
            if now < settled {
                do {
                    _ = try Poller.wait([(mailbox.descriptor, .readable)], until: wake)
                } catch {
                    throw UserFacingError("control: \(error)", status: .failure)
                }
            }
            if let list = step(now: .now, sent: false) { try ask(list) }
            status.update("→ \(follow.withLock { $0.summary })")
            if ContinuousClock.now >= settled || follow.withLock({ $0.followed != nil }) { return }
        }
    }

    /// Starts following on a thread of its own.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            run()
            finished.raise()
        }
        thread.name = "session \(target.session)"
        thread.start()
    }

    /// Stops the thread (waits for it) and the browsing. Idempotent.
    public func stop() {
        if running.exchange(false, ordering: .acquiringAndReleasing) {
            stopRequest.raise()
            while (try? Poller.wait(for: finished.descriptor.rawValue, events: .readable, timeout: .seconds(1)))?.isEmpty ?? false {}
        }
        browser?.stop()
    }

    /// The send loop's input: `source` itself, except that the run ends (`.end(.quit)`) once
    /// ``failure`` is set.
    public func wrap(_ source: any InputSource) -> any InputSource {
        FollowedInput(inner: source, follower: self)
    }

    // MARK: The thread

    private func run() {
        while true {
            let wake = follow.withLock { $0.nextDeadline }
            let ready: [Poller.Events]
            do {
                ready = try Poller.wait([(stopRequest.descriptor.rawValue, .readable), (mailbox.descriptor, .readable),
                                         (destination.firstSent.descriptor.rawValue, .readable)], until: wake)
            } catch {
                logger.error("session follower stopped: \(error); the controller keeps its current receiver")
                return
            }
            if !ready[0].isEmpty { return }
            let sent = !ready[2].isEmpty && destination.firstSent.clear()
            if let list = step(now: .now, sent: sent) {
                ambiguousWhileRunning(list)
            }
        }
    }

    /// Feeds what happened to FollowReceiver and acts on it. Returns the receivers to choose
    /// from when it reported an ambiguity.
    private func step(now: ContinuousClock.Instant, sent: Bool) -> [DiscoveredReceiver]? {
        let events = mailbox.drain()
        let (actions, summary) = follow.withLock { f -> ([FollowReceiver.Action], String) in
            // A packet that went out belongs to the destination set before these events.
            var actions = sent ? f.packetSent(now: now) : []
            for event in events { actions += f.handle(event, now: now) }
            actions += f.tick(now: now)
            return (actions, f.summary)
        }
        var ambiguous: [DiscoveredReceiver]?
        for action in actions {
            if case .ambiguous(let list) = action { ambiguous = list } else { act(action) }
        }
        destination.note = summary
        return ambiguous
    }

    private func act(_ action: FollowReceiver.Action) {
        switch action {
        case .state(let name, let state):
            let level: Logger.Level = state == .disconnected ? .warning : state == .connected || state == .connecting ? .notice : .info
            logger.log(level: level, "receiver \(BrowseListing.quote(name)) \(state.rawValue)",
                       metadata: ["session": "\(target.session)", "state": "\(state.rawValue)"])
        case .sendTo(let address, let receiver):
            let timing = receiver.announcement.timing
            let cadence = SendCadence.plan(requestedPeriod: target.requestedPeriod, receiver: timing)
            destination.set(Destination.Peer(address: address, label: BrowseListing.quote(receiver.name), period: cadence.period))
            logger.notice("sending to \(BrowseListing.quote(receiver.name)) at \(address) every \(BrowseListing.milliseconds(cadence.period)) ms (\(cadence.boundBy.rawValue))",
                          metadata: ["failsafe_ms": "\(timing.failsafeMilliseconds)", "rate": "\(timing.rateHz)",
                                     "peer": "\(receiver.announcement.peer)"])
            if !cadence.honoursFailsafe {
                logger.warning("cannot honour the receiver's failsafe of \(timing.failsafeMilliseconds) ms: this controller sends at most every \(BrowseListing.milliseconds(SendCadence.minimumPeriod)) ms")
            }
        case .stopSending(let name):
            destination.set(nil)
            logger.warning("receiver \(BrowseListing.quote(name)) is gone: stopped sending, still looking in session \(BrowseListing.quote(target.session.text))")
        case .ignored(let name, let reason):
            logger.notice("ignored \(BrowseListing.quote(name)): \(reason)")
        case .discoveryPaused(let retry):
            let keep = destination.current.map { "still sending to \($0.description)" } ?? "nothing to send to"
            logger.warning("the mDNS responder went away (\(keep)); retrying in \(retry)")
        case .discoveryResumed:
            logger.notice("the mDNS responder is back")
        case .renamed(let name, let asked):
            logger.warning("receiver \(BrowseListing.quote(name)) is in session \(BrowseListing.quote(target.session.text)) under a new name: \(BrowseListing.renameReason(asked: asked))")
        case .refresh(let instance):
            browser?.refresh(instance: instance)
        case .ambiguous:
            break
        }
    }

    // MARK: Several receivers, none chosen

    private func ambiguityError(_ list: [DiscoveredReceiver]) -> UserFacingError {
        UserFacingError("\(list.count) receivers in session \"\(target.session)\" and none chosen: pick one with --receiver NAME",
                        status: .ambiguousReceiver)
    }

    /// At start: ask on a terminal, or list them (stdout) and fail with exit status 6.
    private func ask(_ list: [DiscoveredReceiver]) throws(UserFacingError) {
        status.clear()
        guard interactive.load(ordering: .relaxed) else {
            for r in list { BrowseListing.writeLine(BrowseListing.describe(r)) }
            throw ambiguityError(list)
        }
        var prompt = "\(list.count) receivers in session \"\(target.session)\":\n"
        for (i, r) in list.enumerated() { prompt += "  \(i + 1)) \(BrowseListing.describe(r))\n" }
        StandardError.write(prompt)
        while true {
            StandardError.write("drive which one? [1-\(list.count), or a name] ")
            guard let answer = Self.readLine() else {
                StandardError.write("\n")
                throw ambiguityError(list)
            }
            if let chosen = ReceiverChoice.pick(answer, from: list) {
                let actions = follow.withLock { $0.choose(chosen.name, now: .now) }
                for action in actions { act(action) }
                destination.note = follow.withLock { $0.summary }
                return
            }
            StandardError.write("no receiver \(BrowseListing.quote(answer)) in the list\n")
        }
    }

    /// While running (receivers appeared after the start, or the followed one left and several
    /// others are there): nobody can be asked without fighting the input for the terminal.
    /// Non-interactive runs end with exit status 6 as at start; interactive ones say so and
    /// keep looking (the receiver left comes back, or `--receiver` on the next start).
    private func ambiguousWhileRunning(_ list: [DiscoveredReceiver]) {
        let names = list.map { BrowseListing.quote($0.name) }.joined(separator: ", ")
        if interactive.load(ordering: .relaxed) {
            logger.warning("\(list.count) receivers in session \(BrowseListing.quote(target.session.text)) and none chosen (\(names)): restart with --receiver NAME to drive one")
            return
        }
        status.clear()
        for r in list { BrowseListing.writeLine(BrowseListing.describe(r)) }
        failed.withLock { if $0 == nil { $0 = ambiguityError(list) } }
        destination.changed.raise()   // wakes the send loop, which asks FollowedInput and ends
    }

    /// One line from stdin (a terminal in canonical mode), without the newline; nil at EOF.
    private static func readLine() -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n: Int
            do {
                n = try Syscall.call("read", subject: "stdin") { Glibc.read(STDIN_FILENO, &byte, 1) }
            } catch {
                return nil
            }
            if n == 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            if bytes.count < 1024 { bytes.append(byte) }
        }
    }
}

/// How a person's answer picks a receiver from a numbered list: its number (1-based), its
/// instance name, or its peer id. Surrounding blanks do not count.
public enum ReceiverChoice {
    public static func pick(_ answer: String, from list: [DiscoveredReceiver]) -> DiscoveredReceiver? {
        let trimmed = answer.trimmingCharacters(in: .whitespaces)
        if let n = Int(trimmed) { return list.indices.contains(n - 1) ? list[n - 1] : nil }
        return list.first { $0.name == trimmed } ?? list.first { !$0.announcement.peer.isEmpty && $0.announcement.peer == trimmed }
    }
}

/// The send loop's input while following a session: the real source, plus a way for the
/// follower's thread to end the run (it raises the destination's change flag, the loop wakes
/// and sees ``nextDeadline`` due).
final class FollowedInput: InputSource {
    let inner: any InputSource
    let follower: SessionFollower
    private var ended = false
    /// A deadline already in the past: the loop compares deadlines with the time it woke up.
    private let past = ContinuousClock.now

    init(inner: any InputSource, follower: SessionFollower) {
        self.inner = inner
        self.follower = follower
    }

    private var mustEnd: Bool { !ended && follower.failure != nil }

    var name: String { inner.name }
    var descriptor: Int32? { ended ? nil : inner.descriptor }
    var nextDeadline: ContinuousClock.Instant? { mustEnd ? past : ended ? nil : inner.nextDeadline }

    func start(now: ContinuousClock.Instant) throws -> [InputEvent] { try inner.start(now: now) }

    func read(now: ContinuousClock.Instant) -> [InputEvent] {
        if mustEnd { return end() }
        let events = inner.read(now: now)
        if events.contains(where: { if case .end = $0 { true } else { false } }) { ended = true }
        return events
    }

    func deadlinePassed(now: ContinuousClock.Instant) -> [InputEvent] {
        if mustEnd { return end() }
        let events = inner.deadlinePassed(now: now)
        if events.contains(where: { if case .end = $0 { true } else { false } }) { ended = true }
        return events
    }

    func close() { inner.close() }

    private func end() -> [InputEvent] {
        ended = true
        return [.end(.quit)]
    }
}
