import RemoteWire
import SystemIO

/// The controller's side of a session, GameKit style: which receivers are there, which one it
/// follows, and where to send. A value-type state machine driven by ``BrowserEvent``s, the
/// controller's own "packet sent", and the time (a manual clock in tests); the loop around it
/// does the I/O.
///
/// Choosing: `--receiver NAME` (an instance name or a peer id) follows that receiver whenever it
/// is there. Without a name the controller follows the only receiver of the session, but first
/// waits ``Configuration/settle`` after start, so that two receivers answering the same query a
/// few milliseconds apart are both seen; with several it reports ``Action/ambiguous(_:)`` (a
/// non-interactive caller lists them and ends with an ambiguous-receiver failure).
///
/// Following: when the followed receiver goes, the controller stops sending (``Action/stopSending(name:)``),
/// shows it as disconnected and keeps looking; when it comes back — on any address or port — the
/// new destination is emitted (``Action/sendTo(_:receiver:)``) without a restart. A different
/// receiver is followed only when no name was given, it is the only one, and the previous one has
/// been gone for ``Configuration/switchGrace``.
///
/// One address per receiver (Protocol.md §6.4): the destination is the receiver's best address
/// when it is first followed, and it stays that address while the receiver still announces it —
/// an A record answering after the AAAA (or the other way round) adds an address but never moves
/// the destination. It moves only when the address is withdrawn (or the port changes), or when
/// the caller reports that it stopped answering (``unresponsive(now:)``): then to the next
/// address the receiver announces. The receiver recognises the controller on its new address by
/// its connection id, so such a move keeps ownership and never trips the failsafe.
///
/// Names: `--receiver` matches the display name within the session (``Receiver/name``), the
/// instance name or the peer id. ``wants(instance:)`` tells the browser which instances are
/// worth resolving at all; a receiver of the session renamed away from the wanted name
/// ("robot2" → "robot2 #2") is reported once as ``Action/renamed(name:asked:)``, from its
/// instance name alone.
///
/// Wiring, in a poll loop (what `control` does; `BrowseLoop` does the same without sending):
/// ```swift
/// let mailbox = try EventMailbox<BrowserEvent>()
/// let browser = try SessionBrowser(session: id, onEvent: mailbox.post)   // DiscoveryError → .userFacing()
/// var follow = FollowReceiver(.init(session: id, receiverName: receiverOption), now: .now)
/// // poll mailbox.descriptor (+ your sockets) until min(next send, follow.nextDeadline); then:
/// for event in mailbox.drain() { act(follow.handle(event, now: .now)) }
/// act(follow.tick(now: .now))
/// // act: .sendTo(address, r) → send there every SendCadence.plan(requestedRateHz:, receiver: r.announcement.timing).period
/// //      .stopSending → stop; .ambiguous(list) → print BrowseListing.describe(each), exit 6
/// //      .state(name, s) → log; status line: follow.summary
/// // after each datagram to follow.destination: act(follow.packetSent(now: .now))
/// ```
package struct FollowReceiver: Sendable {
    /// GameKit's GKPeerConnectionState, as this controller sees each receiver.
    package enum PeerState: String, Equatable, Sendable {
        /// Seen in the session, not followed.
        case available
        /// Was available, now gone.
        case unavailable
        /// Followed: destination known, nothing sent to it yet.
        case connecting
        /// Followed, and packets are going to its destination.
        case connected
        /// Was followed, now gone; the controller keeps looking for it.
        case disconnected
    }

    package struct Configuration: Sendable {
        package var session: SessionID
        /// `--receiver`: an instance name or a peer id; nil to follow the only one.
        package var receiverName: String?
        package var settle: Duration
        package var switchGrace: Duration
        package var refreshGrace: Duration

        package init(session: SessionID, receiverName: String? = nil, settle: Duration = .milliseconds(500),
                    switchGrace: Duration = .seconds(2), refreshGrace: Duration = .seconds(3)) {
            self.session = session
            self.receiverName = receiverName
            self.settle = settle
            self.switchGrace = switchGrace
            self.refreshGrace = refreshGrace
        }
    }

    package enum Action: Equatable, Sendable {
        /// A receiver's state changed (show it in the status line and log it).
        case state(name: String, PeerState)
        /// Send to this address from now on (first choice, or the receiver moved).
        case sendTo(SocketAddress, receiver: DiscoveredReceiver)
        /// The followed receiver is gone: stop sending, keep looking.
        case stopSending(name: String)
        /// Several receivers and none chosen: list them; exit 6 when non-interactive.
        case ambiguous([DiscoveredReceiver])
        /// A service of this type and subtype that is not ours (session mismatch, other version).
        case ignored(name: String, reason: String)
        /// The mDNS responder went away; discovery retries on its own. Sending goes on.
        case discoveryPaused(retryIn: Duration)
        case discoveryResumed
        /// A receiver of the session asked for the name being looked for, but another receiver
        /// of the session has it, so it is announced as `name` ("robot2 #2"). Tell the driver.
        case renamed(name: String, asked: String)
        /// The followed receiver's only address stopped answering: resolve it again (the
        /// browser stopped querying once it was resolved).
        case refresh(instance: String)
    }

    package private(set) var configuration: Configuration
    package private(set) var directory: ReceiverDirectory
    /// The receiver being followed (its display name).
    package private(set) var followed: String?
    /// Its instance name.
    package private(set) var followedInstance: String?
    package private(set) var destination: SocketAddress?
    package private(set) var states: [String: PeerState] = [:]

    private let started: ContinuousClock.Instant
    private var settled = false
    private var previous: (name: String, since: ContinuousClock.Instant)?
    private var switchGraceOver = false
    private var sentToDestination = false
    private var lastAmbiguity: [String] = []
    private var discoveryPaused = false
    private var renamesShown: Set<String> = []

    package init(_ configuration: Configuration, now: ContinuousClock.Instant) {
        self.configuration = configuration
        self.directory = ReceiverDirectory(session: configuration.session, refreshGrace: configuration.refreshGrace)
        self.started = now
    }

    /// When ``tick(now:)`` next has something to do; nil = only events matter.
    package var nextDeadline: ContinuousClock.Instant? {
        var deadlines: [ContinuousClock.Instant] = []
        if !settled { deadlines.append(started + configuration.settle) }
        if followed == nil, let previous, !switchGraceOver { deadlines.append(previous.since + configuration.switchGrace) }
        if let d = directory.nextDeadline { deadlines.append(d) }
        return deadlines.min()
    }

    package mutating func handle(_ event: BrowserEvent, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .responderLost(let retryIn):
            discoveryPaused = true
            actions.append(.discoveryPaused(retryIn: retryIn))
        case .responderBack:
            discoveryPaused = false
            actions.append(.discoveryResumed)
        case .found(let key):
            if let wanted = configuration.receiverName, let parsed = InstanceName.parse(key.name, in: configuration.session),
               parsed.rename != nil, parsed.asked == wanted, renamesShown.insert(key.name).inserted {
                actions.append(.renamed(name: DisplayText.sanitised(parsed.display), asked: DisplayText.sanitised(parsed.asked)))
            }
        default:
            break
        }
        actions += apply(directory.apply(event, now: now), now: now)
        actions += select(now: now)
        return actions
    }

    /// Call after each packet sent to ``destination``; the first one makes the peer connected.
    package mutating func packetSent(now: ContinuousClock.Instant) -> [Action] {
        guard let followed, destination != nil, !sentToDestination else { return [] }
        sentToDestination = true
        return setState(followed, .connected)
    }

    package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        apply(directory.expire(now: now), now: now) + select(now: now)
    }

    /// True when an instance of the session is worth resolving: every one without `--receiver`
    /// (any may be the only one) or when `--receiver` may be a peer id (only TXT says); otherwise
    /// only the wanted name and the instance followed.
    package func wants(instance: String) -> Bool {
        instance == followedInstance || Self.interest(receiverName: configuration.receiverName, session: configuration.session)(instance)
    }

    /// ``wants(instance:)`` for a browser, before any follower exists (`--receiver` and the session).
    package static func interest(receiverName: String?, session: SessionID) -> @Sendable (String) -> Bool {
        guard let wanted = receiverName, !mayBePeerID(wanted) else { return { _ in true } }
        return { instance in instance == wanted || DiscoveredReceiver.displayName(instance: instance, session: session) == wanted }
    }

    package static func mayBePeerID(_ s: String) -> Bool {
        s.utf8.count == 16 && s.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The caller's link check says the destination stopped answering (no reply to the
    /// controller's pings, Protocol.md §7.5): move to the receiver's next announced address, or,
    /// when it has no other, ask for it to be resolved again.
    package mutating func unresponsive(now: ContinuousClock.Instant) -> [Action] {
        guard let followedInstance, let destination, let r = directory.receiver(named: followedInstance) else { return [] }
        let others = r.addresses.filter { $0 != destination }
        guard !others.isEmpty else { return [.refresh(instance: followedInstance)] }
        // The next one after the current in the receiver's order, wrapping around.
        let list = r.addresses
        let next = list.firstIndex(of: destination).map { list[($0 + 1) % list.count] } ?? list[0]
        self.destination = next
        sentToDestination = false
        return setState(r.name, .connecting) + [.sendTo(next, receiver: r), .refresh(instance: followedInstance)]
    }

    /// A person picked one of the receivers listed after ``Action/ambiguous(_:)``.
    package mutating func choose(_ name: String, now: ContinuousClock.Instant) -> [Action] {
        configuration.receiverName = name
        return select(now: now)
    }

    /// One line for the status line, e.g. `following "robot" at 198.18.0.1:45678 (connected)`.
    package var summary: String {
        let paused = discoveryPaused ? " — mDNS responder gone, retrying" : ""
        if let followed, let destination {
            return "following \"\(followed)\" at \(destination) (\(states[followed]?.rawValue ?? "?"))" + paused
        }
        if let previous {
            return "receiver \"\(previous.name)\" gone — looking in session \"\(configuration.session)\"" + paused
        }
        if let name = configuration.receiverName {
            return "looking for \"\(name)\" in session \"\(configuration.session)\"" + paused
        }
        let n = directory.receivers.count
        return "looking in session \"\(configuration.session)\" (\(n) receiver\(n == 1 ? "" : "s"))" + paused
    }

    private mutating func apply(_ changes: [DirectoryChange], now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for change in changes {
            switch change {
            case .available(let r):
                // The receiver asked for by name, or the one that just left, is followed at once
                // by select(): go straight to connecting rather than flash "available".
                let followsAtOnce = r.name == followed || r.name == configuration.receiverName
                    || r.instance == configuration.receiverName || r.name == previous?.name
                if !followsAtOnce { actions += setState(r.name, .available) }
            case .updated(let r):
                // One address per receiver: keep the destination while it is still announced.
                guard r.instance == followedInstance, let d = r.destination, let current = destination,
                      !r.addresses.contains(current) else { continue }
                destination = d
                sentToDestination = false
                actions += setState(r.name, .connecting)
                actions.append(.sendTo(d, receiver: r))
            case .unavailable(let name):
                if name == followed {
                    followed = nil
                    followedInstance = nil
                    destination = nil
                    sentToDestination = false
                    previous = (name, now)
                    switchGraceOver = false
                    actions += setState(name, .disconnected)
                    actions.append(.stopSending(name: name))
                } else {
                    actions += setState(name, .unavailable)
                }
            case .ignored(let name, let reason):
                actions.append(.ignored(name: name, reason: reason))
            }
        }
        return actions
    }

    private mutating func select(now: ContinuousClock.Instant) -> [Action] {
        if now >= started + configuration.settle { settled = true }
        if let previous, now >= previous.since + configuration.switchGrace { switchGraceOver = true }
        guard followed == nil else { return [] }
        let candidates = directory.receivers
        if let wanted = configuration.receiverName {
            guard let r = candidates.first(where: { $0.name == wanted })
                    ?? candidates.first(where: { $0.instance == wanted })
                    ?? candidates.first(where: { !$0.announcement.peer.isEmpty && $0.announcement.peer == wanted })
            else { return [] }
            return follow(r)
        }
        if let previous, let r = candidates.first(where: { $0.name == previous.name }) { return follow(r) }
        guard settled, previous == nil || switchGraceOver else { return [] }
        if candidates.count == 1 { return follow(candidates[0]) }
        guard candidates.count > 1 else { return [] }
        let names = candidates.map(\.name)
        guard names != lastAmbiguity else { return [] }
        lastAmbiguity = names
        return [.ambiguous(candidates)]
    }

    private mutating func follow(_ r: DiscoveredReceiver) -> [Action] {
        guard let d = r.destination else { return [] }
        followed = r.name
        followedInstance = r.instance
        destination = d
        sentToDestination = false
        previous = nil
        lastAmbiguity = []
        return setState(r.name, .connecting) + [.sendTo(d, receiver: r)]
    }

    private mutating func setState(_ name: String, _ state: PeerState) -> [Action] {
        guard states[name] != state else { return [] }
        states[name] = state
        return [.state(name: name, state)]
    }
}
