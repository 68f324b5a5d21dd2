#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import Discovery
import Foundation
import Logging
import Synchronization
import SystemIO

/// What `control --session ID [--receiver NAME]` asked for.
package struct SessionTarget: Sendable {
    package var session: SessionID
    /// An instance name or a peer id; nil = the only receiver of the session.
    package var receiver: String?
    /// `--rate` when the person gave it; nil lets the receiver's timing contract decide.
    package var requestedRate: Double?

    package init(session: SessionID, receiver: String?, requestedRate: Double?) {
        self.session = session
        self.receiver = receiver
        self.requestedRate = requestedRate
    }

    /// The user's request as a period, for ``SendCadence``.
    var requestedPeriod: Duration? {
        requestedRate.map { .nanoseconds(Int64((1e9 / $0).rounded())) }
    }
}

/// Where the follower's discovery events come from: the session's DNS-SD browse, polled inline
/// (``InlineDNSService``), or — in tests — a mailbox someone else posts to.
protocol FollowerEvents: AnyObject {
    var descriptors: [Int32] { get }
    var nextDeadline: ContinuousClock.Instant? { get }
    /// Everything that arrived (never blocks).
    func take() -> [BrowserEvent]
    func refresh(instance: String)
    func stop()
}

/// The session's browse, run in the caller's poll loop.
final class BrowseEvents: FollowerEvents {
    private let service: InlineDNSService
    private let browse: InlineBrowse
    private let arrived: Events

    final class Events: Sendable {
        let list = Mutex<[BrowserEvent]>([])
    }

    init(target: SessionTarget) throws(DiscoveryError) {
        service = try InlineDNSService()
        let arrived = Events()
        self.arrived = arrived
        // `--receiver NAME` (not a peer id, which only TXT tells): resolve that instance at once.
        let known = target.receiver.flatMap { FollowReceiver.mayBePeerID($0) ? nil : InstanceName.forWanted($0, in: target.session) }
        let probe = known.flatMap { InstanceName.parse($0, in: target.session)?.rename == nil ? InstanceName.alternative(to: $0) : nil }
        browse = try service.browse(session: target.session, lookups: .once,
                                    interest: FollowReceiver.interest(receiverName: target.receiver, session: target.session),
                                    knownInstance: known, renameProbe: probe) { event in
            arrived.list.withLock { $0.append(event) }
        }
    }

    var descriptors: [Int32] { service.descriptors }
    var nextDeadline: ContinuousClock.Instant? { service.nextDeadline }

    func take() -> [BrowserEvent] {
        service.process()
        return arrived.list.withLock { list in
            defer { list.removeAll() }
            return list
        }
    }

    func refresh(instance: String) { browse.refresh(instance: instance) }
    func stop() { service.shutdown() }
}

/// Tests: events posted to a mailbox from another thread.
final class MailboxEvents: FollowerEvents {
    let mailbox: EventMailbox<BrowserEvent>
    private(set) var refreshed: [String] = []
    init(_ mailbox: EventMailbox<BrowserEvent>) { self.mailbox = mailbox }
    var descriptors: [Int32] { [mailbox.descriptor] }
    var nextDeadline: ContinuousClock.Instant? { nil }
    func take() -> [BrowserEvent] { mailbox.drain() }
    func refresh(instance: String) { refreshed.append(instance) }
    func stop() {}
}

/// The controller's side of a session: browses the session, runs ``FollowReceiver`` on what it
/// sees, and points the send loop's ``Destination`` at the receiver it follows — with the resend
/// period of that receiver's timing contract (``SendCadence``). GameKit's peer states go to the
/// log and, through ``Destination/note``, to the status line.
///
/// No thread of its own: it is a ``SendLoopCompanion``, so the send loop polls the DNS-SD reply
/// sockets (``InlineDNSService``) next to its input and state socket, and the follower runs on
/// every wake-up. Nothing relays discovery results between threads.
///
/// Life cycle (what `ControlCommand` does):
/// 1. `init` starts browsing; no mDNS responder → ``DiscoveryError`` (exit status 5 in the CLI).
/// 2. ``chooseAtStart(interactive:)`` (before the input starts): waits for the settle window;
///    several receivers and no `--receiver` → asks on a terminal, or lists them and throws exit
///    status 6.
/// 3. The send loop runs with the follower among its companions. When following fails for good
///    (the followed receiver left, several others remain, and nobody can be asked) the follower
///    ends the loop; ``failure`` then holds the error to exit with. ``stop()`` ends the browsing.
///
/// One address per receiver: when the control session reports that the receiver stopped
/// answering on its address (``linkSilence``), the follower moves to the receiver's next address
/// (``FollowReceiver/unresponsive(now:)``) or resolves it again.
package final class SessionFollower: SendLoopCompanion {
    package let target: SessionTarget
    private let destination: Destination
    private let logger: Logger
    private let status: StatusLine
    private let events: any FollowerEvents
    private var follow: FollowReceiver
    private let startedAt: ContinuousClock.Instant
    private let settle: Duration
    private var interactive = false
    private(set) var failure_: CommandFailure?
    private var stopped = false
    private var lastUnresponsive: ContinuousClock.Instant?
    /// The followed receiver withdrew its announcement while it still answered: sending goes on
    /// to its address until it comes back in DNS-SD or stops answering (``answeredWithin``).
    private var keptAfterGoodbye: String?

    /// A withdrawn receiver that answered within this long is still there (its mDNS responder
    /// is restarting, say): the controller keeps sending to it. Pings go once a second.
    package static let answeredWithin: Duration = .seconds(2)

    /// How long the followed receiver may stay silent (no answer to the controller's pings, which
    /// go once a second) before its address counts as not answering. Two missed pongs; kept
    /// well inside the receiver's reclaim window (failsafe + `--reclaim-s`, 3.25 s by default,
    /// counted from the last state), so a moved controller finds the robot still reserved for it
    /// even when a busy machine makes the move late.
    package static let unansweredAfter: Duration = .seconds(2)
    /// How long the link has been silent: time since the receiver last answered on the current
    /// destination, or nil when it has not answered there yet (an older receiver never does).
    /// Set by the command to the control session's view.
    package var linkSilence: ((ContinuousClock.Instant) -> Duration?)?

    /// Starts browsing the session. No mDNS responder: ``DiscoveryError`` (the CLI says exit status
    /// 5, with `--peer` as the way round).
    package convenience init(target: SessionTarget, destination: Destination, logger: Logger, status: StatusLine,
                            settle: Duration = .milliseconds(500)) throws(DiscoveryError) {
        let events: BrowseEvents
        events = try BrowseEvents(target: target)
        self.init(target: target, destination: destination, logger: logger, status: status, settle: settle, events: events)
    }

    /// Tests: the events are posted to `mailbox` by someone else.
    convenience init(target: SessionTarget, destination: Destination, logger: Logger, status: StatusLine, settle: Duration,
                     mailbox: EventMailbox<BrowserEvent>) {
        self.init(target: target, destination: destination, logger: logger, status: status, settle: settle,
                  events: MailboxEvents(mailbox))
    }

    init(target: SessionTarget, destination: Destination, logger: Logger, status: StatusLine, settle: Duration,
         events: any FollowerEvents) {
        self.target = target
        self.destination = destination
        self.logger = logger
        self.status = status
        self.settle = settle
        self.events = events
        startedAt = .now
        follow = FollowReceiver(.init(session: target.session, receiverName: target.receiver, settle: settle), now: startedAt)
        destination.note = follow.summary
        logger.info("looking for receivers", metadata: [
            "session": "\(target.session)", "subtype": "\(target.session.subtype)",
            "receiver": "\(target.receiver ?? "(the only one)")",
        ])
    }

    deinit { stop() }

    /// Set once following failed for good; the command exits with it.
    package var failure: CommandFailure? { failure_ }

    /// Waits out the settle window (without `--receiver`), so that the choice between several
    /// receivers is made before the input starts. `interactive`: stdin is a terminal, so a
    /// person can be asked; otherwise several receivers end the command with exit status 6.
    package func chooseAtStart(interactive: Bool) throws(CommandFailure) {
        self.interactive = interactive
        guard target.receiver == nil else {
            _ = step(now: .now, sent: false)    // whatever the browse already knows
            return
        }
        let settled = startedAt + settle
        status.update("→ \(follow.summary)", force: true)
        while true {
            let now = ContinuousClock.now
            let wake = [follow.nextDeadline, events.nextDeadline, settled].compactMap { $0 }.min()
            if now < settled {
                do {
                    _ = try Poller.wait(events.descriptors.map { ($0, .readable) }, until: wake)
                } catch {
                    throw CommandFailure("control: \(error)", kind: .failed)
                }
            }
            if let list = step(now: .now, sent: false) { try ask(list) }
            status.update("→ \(follow.summary)")
            if ContinuousClock.now >= settled || follow.followed != nil { return }
        }
    }

    /// Stops the browsing. Idempotent.
    package func stop() {
        guard !stopped else { return }
        stopped = true
        events.stop()
    }

    // MARK: SendLoopCompanion

    package var descriptor: Int32? { nil }
    package var descriptors: [Int32] { stopped ? [] : events.descriptors + [destination.firstSent.descriptor.rawValue] }
    package var nextDeadline: ContinuousClock.Instant? {
        if failure_ != nil { return .now }
        var wake = [follow.nextDeadline, events.nextDeadline].compactMap { $0 }
        if follow.destination != nil || keptAfterGoodbye != nil, linkSilence != nil { wake.append(.now + .milliseconds(500)) }   // the link check
        return wake.min()
    }
    package var allowsStates: Bool { true }
    package var statusParts: [String] { [] }

    package func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
        if failure_ != nil { return [.end(.quit)] }
        guard !stopped else { return [] }
        let sent = destination.firstSent.clear()
        if let list = step(now: now, sent: sent) { ambiguousWhileRunning(list) }
        checkLink(now: now)
        checkKept(now: now)
        return failure_ != nil ? [.end(.quit)] : []
    }

    package func finish(socket: UDPSocket?, peer: SocketAddress?) {}

    /// The followed receiver stopped answering on its address: move to its next address, or
    /// resolve it again; at most once per ``unansweredAfter``.
    private func checkLink(now: ContinuousClock.Instant) {
        guard follow.destination != nil, let silence = linkSilence?(now), silence >= Self.unansweredAfter else { return }
        if let last = lastUnresponsive, now - last < Self.unansweredAfter { return }
        lastUnresponsive = now
        let from = follow.destination
        let actions = follow.unresponsive(now: now)
        if let from { logger.warning("receiver \(BrowseListing.quote(follow.followed ?? "?")) has not answered at \(from) for \(BrowseListing.milliseconds(silence)) ms") }
        for action in actions { act(action) }
        destination.note = follow.summary
    }

    /// A receiver kept after its goodbye that no longer answers is gone after all.
    private func checkKept(now: ContinuousClock.Instant) {
        guard let name = keptAfterGoodbye else { return }
        if let silence = linkSilence?(now), silence < Self.answeredWithin { return }
        keptAfterGoodbye = nil
        stopSending(name)
    }

    private func stopSending(_ name: String) {
        destination.set(nil)
        logger.warning("receiver \(BrowseListing.quote(name)) is gone: stopped sending, still looking in session \(BrowseListing.quote(target.session.text))")
    }

    /// Feeds what happened to FollowReceiver and acts on it. Returns the receivers to choose
    /// from when it reported an ambiguity.
    private func step(now: ContinuousClock.Instant, sent: Bool) -> [DiscoveredReceiver]? {
        let arrived = events.take()
        // A packet that went out belongs to the destination set before these events.
        var actions = sent ? follow.packetSent(now: now) : []
        for event in arrived {
            logger.debug("discovery: \(event)")
            actions += follow.handle(event, now: now)
        }
        actions += follow.tick(now: now)
        let summary = follow.summary
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
            keptAfterGoodbye = nil
            let timing = receiver.announcement.timing
            let cadence = SendCadence.plan(requestedPeriod: target.requestedPeriod, receiver: timing)
            let peer = Destination.Peer(address: address, label: BrowseListing.quote(receiver.name), period: cadence.period,
                                        receiver: receiver.instance, incarnation: receiver.announcement.peer)
            let unchanged = destination.current == peer
            destination.set(peer)
            // The same destination again (back in DNS-SD after a goodbye it outlived): packets
            // never stopped, so it is connected at once rather than after a "first" send.
            if unchanged { destination.firstSent.raise() }
            logger.notice("sending to \(BrowseListing.quote(receiver.name)) at \(address) every \(BrowseListing.milliseconds(cadence.period)) ms (\(cadence.boundBy.rawValue))",
                          metadata: ["failsafe_ms": "\(timing.failsafeMilliseconds)", "rate": "\(timing.rateHz)",
                                     "peer": "\(receiver.announcement.peer)"])
            if !cadence.honoursFailsafe {
                logger.warning("cannot honour the receiver's failsafe of \(timing.failsafeMilliseconds) ms: this controller sends at most every \(BrowseListing.milliseconds(SendCadence.minimumPeriod)) ms")
            }
        case .stopSending(let name):
            // A goodbye in DNS-SD is not the receiver going away when it still answers: an mDNS
            // responder restarting on the robot withdraws every name for a second or two, and
            // stopping now would trip the failsafe for that long.
            if let current = destination.current, let silence = linkSilence?(.now), silence < Self.answeredWithin {
                keptAfterGoodbye = name
                logger.notice("receiver \(BrowseListing.quote(name)) withdrew its announcement but answered \(BrowseListing.milliseconds(silence)) ms ago: still sending to \(current.address) (its mDNS responder may be restarting)")
                return
            }
            stopSending(name)
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
            events.refresh(instance: instance)
        case .ambiguous:
            break
        }
    }

    // MARK: Several receivers, none chosen

    private func ambiguityError(_ list: [DiscoveredReceiver]) -> CommandFailure {
        CommandFailure("\(list.count) receivers in session \"\(target.session)\" and none chosen: pick one with --receiver NAME",
                       kind: .ambiguousReceiver)
    }

    /// At start: ask on a terminal, or list them (stdout) and fail with exit status 6.
    private func ask(_ list: [DiscoveredReceiver]) throws(CommandFailure) {
        status.clear()
        guard interactive else {
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
                let actions = follow.choose(chosen.name, now: .now)
                for action in actions { act(action) }
                destination.note = follow.summary
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
        if interactive {
            logger.warning("\(list.count) receivers in session \(BrowseListing.quote(target.session.text)) and none chosen (\(names)): restart with --receiver NAME to drive one")
            return
        }
        status.clear()
        for r in list { BrowseListing.writeLine(BrowseListing.describe(r)) }
        if failure_ == nil { failure_ = ambiguityError(list) }
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
package enum ReceiverChoice {
    package static func pick(_ answer: String, from list: [DiscoveredReceiver]) -> DiscoveredReceiver? {
        let trimmed = answer.trimmingCharacters(in: .whitespaces)
        if let n = Int(trimmed) { return list.indices.contains(n - 1) ? list[n - 1] : nil }
        return list.first { $0.name == trimmed } ?? list.first { !$0.announcement.peer.isEmpty && $0.announcement.peer == trimmed }
    }
}
