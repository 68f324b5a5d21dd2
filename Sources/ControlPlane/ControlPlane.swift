import RemoteWire

/// The receiver's classroom settings (Protocol.md §7): who may drive, pairing, teacher key.
public struct ClassroomSettings: Sendable {
    public var accept: AcceptMode = .first
    /// Shown at start; required in hello under `--accept paired`.
    public var pairingCode = ""
    /// With a key, a stop-all must carry its MAC (HMAC-SHA256, first 16 bytes).
    public var teacherKey: String?
    /// The receiver's session ID; empty = in no session (stop-all of any session is taken, a
    /// hello's session is not checked).
    public var session = ""
    /// The receiver's display name, sent in `accept` and stop-all replies.
    public var displayName = ""
    /// GameKit's peer id for `accept` (random per process).
    public var peerID: UInt64 = 0
    /// The failsafe timeout announced in `accept` (the receiver's `--failsafe-ms`).
    public var failsafe = FailsafeTimeout.standard
    /// Per-source rate limit (datagrams per second, burst), before any decoding. Above what an
    /// honest controller can send: `control --rate 1000` plus its change-triggered packets
    /// (at most one a millisecond) stays under 2000/s; a flood is hundreds of thousands.
    public var rate: Double = 2000
    public var burst: Double = 200

    public init() {}

    /// Four random digits, as the receiver shows them at start.
    public static func randomPairingCode() -> String {
        String(UInt16.random(in: 0...9999)).leftPadded(to: 4)
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// The receiver's control plane as a value type: rate limit, reliable channels, hello →
/// admission → accept/deny, bye, ping → pong, stop-all. It never touches the engine: it returns
/// ``Effect``s that the service applies to ``ReceiverEngine`` (bye frees the robot, stop-all
/// holds it), and datagrams to send. Nothing here waits: reliable messages are queued and go
/// out from ``poll(now:)``.
public struct ControlPlane<Source: Hashable & Sendable>: Sendable {
    public enum Effect: Hashable, Sendable {
        /// A hello was accepted; `name` is its display name.
        case accepted(Source, name: String)
        /// `name` is nil for a plain sender (no hello).
        case denied(Source, name: String?, ControlMessage.Deny)
        /// The controller left: free the robot if it drives.
        case left(Source, name: String?)
        /// A stop-all was taken: hold (`stop` true) or release.
        case teacher(stop: Bool, from: Source)
        /// A stop-all was refused; the text says why.
        case stopRefused(Source, String)
        /// A control datagram that did not decode (counted).
        case malformed(Source, ControlMessageError)
    }

    public struct Output: Sendable {
        public var datagrams: [(Source, [UInt8])] = []
        public var effects: [Effect] = []
        public init() {}
        mutating func append(_ other: Output) {
            datagrams += other.datagrams
            effects += other.effects
        }
    }

    public let settings: ClassroomSettings
    public private(set) var peers: PeerTable<Source>
    public private(set) var admission: Admission<Source>
    public private(set) var stopGuard: StopAllGuard
    /// The connection id of one-shot denies to sources that never sent a control message: not
    /// the channels' id, so that such a deny (sequence 1, never retransmitted) cannot collide
    /// with the sequence numbers of a channel the source may open later.
    let oneShotConnection: UInt32

    public init(settings: ClassroomSettings, connection: UInt32, oneShotConnection: UInt32) {
        precondition(connection != oneShotConnection && oneShotConnection != 0)
        self.settings = settings
        var options = PeerTable<Source>.Options()
        options.rate = settings.rate
        options.burst = settings.burst
        peers = PeerTable(connection: connection, options: options)
        admission = Admission(mode: settings.accept, pairingCode: settings.pairingCode, session: settings.session)
        stopGuard = StopAllGuard(session: settings.session, teacherKey: settings.teacherKey)
        self.oneShotConnection = oneShotConnection
    }

    /// True while a teacher's stop-all holds the robot.
    public var holding: Bool { stopGuard.holding }

    /// The rate limit, before any decoding: false = drop (and count it as `limited`).
    public mutating func admit(_ source: Source, now: ContinuousClock.Instant) -> Bool {
        peers.admit(source, now: now)
    }

    /// May state packets from `source` drive (``Admission/mayDrive(_:)``)?
    public func mayDrive(_ source: Source) -> Bool { admission.mayDrive(source) }

    public func displayName(of source: Source) -> String? { admission.displayName(of: source) }

    /// A state packet from `source` that may not drive: a deny, at most once a second. To a
    /// source with a channel it goes reliably; to a plain sender once, unacknowledged.
    public mutating func refusedState(from source: Source, now: ContinuousClock.Instant) -> Output {
        var out = Output()
        guard let deny = admission.denyForStatePacket(from: source, now: now) else { return out }
        out.effects.append(.denied(source, name: nil, deny))
        if peers.hasChannel(source) {
            peers.send(.deny(deny), to: source, now: now)
        } else {
            let header = ControlHeader(type: .deny, connection: oneShotConnection, sequence: 1)
            out.datagrams.append((source, ControlDatagram(header: header, payload: ControlMessage.deny(deny).encodePayload()[...]).encode()))
        }
        return out
    }

    /// One admitted datagram that is not a state packet. `unixMillis`: this machine's wall clock
    /// (stop-all times are checked against it).
    public mutating func control(_ bytes: [UInt8], from source: Source, now: ContinuousClock.Instant,
                                 unixMillis: UInt64) -> Output {
        var out = Output()
        let (incoming, replies) = peers.receive(bytes, from: source, now: now)
        for r in replies { out.datagrams.append((source, r)) }
        for item in incoming {
            switch item {
            case .malformed(let error):
                out.effects.append(.malformed(source, error))
            case .restarted:
                break
            case .message(let message):
                handle(message, from: source, now: now, unixMillis: unixMillis, into: &out)
            }
        }
        return out
    }

    mutating func handle(_ message: ControlMessage, from source: Source, now: ContinuousClock.Instant,
                         unixMillis: UInt64, into out: inout Output) {
        switch message {
        case .hello(let h):
            switch admission.hello(h, from: source) {
            case .accept:
                peers.send(.accept(.init(peerID: settings.peerID, displayName: settings.displayName,
                                         failsafeMilliseconds: UInt16(clamping: settings.failsafe.milliseconds),
                                         rateHertz: 50)), to: source, now: now)
                out.effects.append(.accepted(source, name: h.displayName))
            case .deny(let deny):
                peers.send(.deny(deny), to: source, now: now)
                out.effects.append(.denied(source, name: h.displayName, deny))
            }
        case .bye:
            let name = admission.displayName(of: source)
            admission.bye(from: source)
            out.effects.append(.left(source, name: name))
        case .stopAll(let command):
            let verdict = stopGuard.consider(command, nowUnixMillis: unixMillis)
            let outcome: ControlMessage.StopAllReply.Outcome
            var text = ""
            switch verdict {
            case .take(let stop):
                out.effects.append(.teacher(stop: stop, from: source))
                outcome = stop ? .stopped : .released
            case .repeated:
                outcome = stopGuard.holding ? .stopped : .released
            case .refused(let why):
                out.effects.append(.stopRefused(source, why))
                outcome = .refused
                text = why
            }
            let reply = ControlMessage.StopAllReply(nonce: command.nonce, outcome: outcome,
                                                    displayName: settings.displayName, text: text)
            out.datagrams.append((source, peers.unreliable(.stopAllReply(reply), to: source)))
        default:
            break   // accept/deny/pong/data/stop-all replies are not for a receiver
        }
    }

    /// Retransmissions and owed acks.
    public mutating func poll(now: ContinuousClock.Instant) -> Output {
        var out = Output()
        out.datagrams = peers.poll(now: now).datagrams
        return out
    }

    public func deadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { peers.deadline(now: now) }

    /// For the status line: the pairing code under `--accept paired`, and the rate-limit count.
    public var statusParts: [String] {
        var parts: [String] = []
        if settings.accept == .paired { parts.append("pairing code \(settings.pairingCode)") }
        if peers.limited > 0 { parts.append("limited \(peers.limited)") }
        return parts
    }
}
