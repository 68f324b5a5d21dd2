import ControlWire
import RemoteWire
import SystemIO

/// The receiver's classroom settings (Protocol.md §7): who may drive, pairing, teacher key.
package struct ClassroomSettings: Sendable {
    package var accept: AcceptMode = .first
    /// Shown at start; required in hello under `--accept paired`.
    package var pairingCode = ""
    /// With a key, a stop-all must carry its MAC (HMAC-SHA256, first 16 bytes).
    package var teacherKey: TeacherKey?
    /// The receiver's session ID; empty = in no session (stop-all of any session is taken, a
    /// hello's session is not checked).
    package var session = ""
    /// The receiver's display name, sent in `accept` and stop-all replies.
    package var displayName = ""
    /// GameKit's peer id for `accept` (random per process).
    package var peerID: UInt64 = 0
    /// The robot's lasting id (kept in its state directory): a stop-all may name it as its
    /// target (`id:…`), every stop-all reply tells it, and watch reports carry it.
    package var robotID: RobotID?
    /// The failsafe timeout announced in `accept` (the receiver's `--failsafe-ms`).
    package var failsafe = FailsafeTimeout.standard
    /// Per-source rate limit (datagrams per second, burst), before any decoding. Above what an
    /// honest controller can send: `control --rate 1000` plus its change-triggered packets
    /// (at most one a millisecond) stays under 2000/s; a flood is hundreds of thousands.
    package var rate: Double = 2000
    package var burst: Double = 200
    /// Under `--accept secret`: the robot's secret (shown at start as words and a QR code).
    package var secret: RobotSecret?
    /// Show the secret on stdout at start (false when it was read from a file).
    package var showSecret = true
    /// How often pairing codes and secrets may be tried, per source and in total.
    package var attempts = AttemptLimiterOptions()

    package init() {}

    /// Four random digits, as the receiver shows them at start.
    package static func randomPairingCode() -> String {
        String(UInt16.random(in: 0...9999)).leftPadded(to: 4)
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// The receiver's control plane as a value type: rate limit, reliable channels, hello →
/// admission → accept/deny, bye, ping → pong, stop-all, and under `--accept secret` the
/// challenge/proof handshake and the authenticated envelopes (Protocol.md "Security"). It never
/// touches the engine: it returns ``Effect``s that the service applies to ``ReceiverEngine``
/// (bye frees the robot, stop-all holds it), and datagrams to send. Nothing here waits:
/// reliable messages are queued and go out from ``poll(now:)``.
///
/// Every accepted controller gets a connection id (64 bits from the system CSPRNG) in the header
/// of the accept; from then on a control datagram from its address without that id is dropped
/// and counted (``PeerTable/wrongConnection``) — a forged `bye` changes nothing.
///
/// A hello from an address that has a live connection is a *contender* (Protocol.md §7.4): it
/// is answered on a channel of its own (``contenders``), and the connection at that address —
/// its channel, keys, admission, ownership — is untouched until the contender shows it holds the
/// connection it was given (a datagram carrying the new connection id; under `secret`, an
/// envelope that opens under the new keys). Under `secret` nothing plain changes a connection,
/// and an address moves only with an envelope that opens under the connection's keys.
package struct ControlPlane<Source: Hashable & Sendable>: Sendable {
    package enum Effect: Hashable, Sendable {
        /// A hello was accepted; `name` is its display name.
        case accepted(Source, name: WireText)
        /// `name` is nil for a plain sender (no hello).
        case denied(Source, name: WireText?, ControlMessage.Deny)
        /// The controller left: free the robot if it drives.
        case left(Source, name: WireText?)
        /// A stop-all was taken: hold (`stop` true) or release.
        case teacher(stop: Bool, from: Source)
        /// A stop-all was refused; the text says why.
        case stopRefused(Source, String)
        /// A control datagram that did not decode (counted).
        case malformed(Source, ControlMessageError)
        /// A wrong pairing code or secret (`what`); `failed` = wrong attempts so far, all sources.
        case attemptFailed(Source, what: String, failed: Int)
        /// An attempt refused unevaluated by the attempt limit; `throttled` = so far.
        case attemptThrottled(Source, throttled: Int)
        /// An envelope that did not open (forged, replayed, stale, unknown connection), or a plain
        /// datagram from a source that must seal them; `refused` = so far.
        case envelopeRefused(Source, SealedEnvelope.Failure, refused: Int)
        /// A hello from the address of a live connection was refused on its own channel; the
        /// connection there is untouched (and is not told: the deny went to the contender).
        case contenderDenied(Source, name: WireText, ControlMessage.Deny)
        /// The controller of a connection now talks from a new address (recognised by its
        /// connection id): it keeps what it had at the old one, ownership included.
        case moved(from: Source, to: Source, name: WireText?)
        /// A teacher command was taken (ControlPlane+Teacher.swift): the service carries it out.
        case teacherCommand(Source, TeacherCommand)
        /// A teacher command was refused; the text says why (also in the reply to its sender).
        case teacherRefused(Source, TeacherCommand.Action, String)
        /// A pong to one of the receiver's own pings (the driver's round trip, §7.12).
        case pong(Source, id: UInt32, sentNanos: UInt64)
    }

    package struct Output: Sendable {
        package var datagrams: [(Source, [UInt8])] = []
        package var effects: [Effect] = []
        package init() {}
        mutating func append(_ other: Output) {
            datagrams += other.datagrams
            effects += other.effects
        }
    }

    /// What a sealed datagram held, once opened (``open(_:from:now:)``).
    package enum Opened: Hashable, Sendable {
        /// An authenticated 8-byte state packet, newer than every state before it.
        case state([UInt8])
        /// An authenticated control datagram: hand it to ``control(_:from:now:unixMillis:sealed:)``.
        case control([UInt8])
        /// Refused (see the ``Effect/envelopeRefused(_:_:refused:)`` in the output).
        case refused
    }

    /// One authenticated connection (`--accept secret`).
    struct Sealing: Sendable {
        var connectionID: UInt64
        var keys: SessionKeys
        var window = ReplayWindow()
        var sent: UInt64 = 0
        /// Counter of the last state packet taken: an older one (reordered) never reaches the engine.
        var lastState: UInt64 = 0

        mutating func sealNext(_ datagram: [UInt8], instance: UInt32) -> [UInt8] {
            sent += 1
            return SealedEnvelope.seal(datagram, connectionID: connectionID, instance: instance, counter: sent,
                                       key: keys.receiverToController)
        }
    }

    package let settings: ClassroomSettings
    /// Every source's rate limit and control channel.
    package var peers: PeerTable<Source> { peerTable }
    @usableFromInline var peerTable: PeerTable<Source>
    package internal(set) var admission: Admission<Source>
    package private(set) var stopGuard: StopAllGuard
    package internal(set) var teacherGuard: TeacherGuard
    package private(set) var attempts: AttemptLimiter<Source>
    /// Receiver nonces of challenges not yet answered, with the hello's name and nonce. A source
    /// with a live connection has none of its own: there it is the contender's.
    var pending: [Source: (nonce: [UInt8], name: WireText, echo: UInt64)] = [:]
    var sealing: [Source: Sealing] = [:]
    /// The source of each sealed connection, by connection id (a sealed move looks it up).
    var sealedSources: [UInt64: Source] = [:]
    /// Hellos from addresses with a live connection, each on a channel of its own.
    package private(set) var contenders: PeerTable<Source>
    /// A contender's keys under `secret`, once it proved the secret (not yet used by it).
    var contenderSealing: [Source: Sealing] = [:]
    /// Contenders accepted (or proved), with their name and hello nonce, until they take over.
    var contenderAccepted: [Source: (name: WireText, echo: UInt64)] = [:]
    /// The hello nonce of each accepted source's hello: every deny to it echoes it.
    var helloNonces: [Source: UInt64] = [:]
    /// Envelopes (and plain datagrams that should have been sealed) refused.
    package private(set) var envelopesRefused = 0
    /// The connection id of one-shot denies to sources that never sent a control message: not
    /// the channels' id, so that such a deny (sequence 1, never retransmitted) cannot collide
    /// with the sequence numbers of a channel the source may open later.
    let oneShotConnection: UInt32
    static var capacity: Int { 1024 }

    package init(settings: ClassroomSettings, connection: UInt32, oneShotConnection: UInt32) {
        precondition(connection != oneShotConnection && oneShotConnection != 0)
        precondition(settings.accept != .secret || settings.secret != nil, "--accept secret needs a secret")
        self.settings = settings
        var options = PeerTable<Source>.Options()
        options.rate = settings.rate
        options.burst = settings.burst
        peerTable = PeerTable(connection: connection, options: options)
        var contenderOptions = options
        contenderOptions.capacity = 256
        contenderOptions.bufferCap = 1 << 20
        contenders = PeerTable(connection: connection, options: contenderOptions)
        admission = Admission(mode: settings.accept, pairingCode: settings.pairingCode, session: settings.session)
        stopGuard = StopAllGuard(session: settings.session, instance: settings.displayName, robotID: settings.robotID,
                                 teacherKey: settings.teacherKey)
        teacherGuard = TeacherGuard(session: settings.session, instance: settings.displayName, robotID: settings.robotID,
                                    teacherKey: stopGuard.teacherKey)
        attempts = AttemptLimiter(options: settings.attempts)
        self.oneShotConnection = oneShotConnection
    }

    /// True while a teacher's stop-all holds the robot.
    package var holding: Bool { stopGuard.holding }

    /// The source that drives: its reordering buffers are never dropped for memory.
    package var owner: Source? {
        get { peerTable.protected }
        set { peerTable.protected = newValue }
    }

    /// The rate limit, before any decoding: false = drop (and count it as `limited`).
    /// `@inlinable`: called for every datagram, it is specialised in the caller's module (the
    /// generic version cost 5,500 instructions a datagram, BENCHMARKS.md).
    @inlinable
    package mutating func admit(_ source: Source, now: ContinuousClock.Instant) -> Bool {
        peerTable.admit(source, now: now)
    }

    @inlinable
    package mutating func admit(_ source: Source, at now: Tick) -> Bool {
        peerTable.admit(source, at: now)
    }

    /// May plain state packets from `source` drive (``Admission/mayDrive(_:)``)?
    package func mayDrive(_ source: Source) -> Bool { admission.mayDrive(source) }

    package func displayName(of source: Source) -> WireText? { admission.displayName(of: source) }

    /// The connection id of `source` (0: none).
    package func connectionID(of source: Source) -> UInt64 { peerTable.connectionID(of: source) }

    /// True for a datagram that is an authenticated envelope by its first bytes (checked fully
    /// when opened).
    package static func isSealed(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= SealedEnvelope.overhead, ControlHeader.looksLikeControl(bytes) else { return false }
        return bytes[bytes.index(bytes.startIndex, offsetBy: 3)] == ControlType.sealed.rawValue
    }

    /// A state packet from `source` that may not drive: a deny, at most once a second. To a
    /// source with a channel it goes reliably; to a plain sender once, unacknowledged.
    package mutating func refusedState(from source: Source, now: ContinuousClock.Instant) -> Output {
        var out = Output()
        guard var deny = admission.denyForStatePacket(from: source, now: now) else { return out }
        deny.echo = helloNonces[source] ?? 0
        out.effects.append(.denied(source, name: nil, deny))
        if peerTable.hasChannel(source) {
            peerTable.send(.deny(deny), to: source, now: now)
        } else {
            let header = ControlHeader(type: .deny, connection: oneShotConnection, sequence: 1)
            out.datagrams.append((source, ControlDatagram(header: header, payload: ControlMessage.deny(deny).encodePayload()[...]).encode()))
        }
        seal(&out)
        return out
    }

    /// Opens an authenticated envelope from `source` (`--accept secret`). Nothing of a refused
    /// one is looked at further; a state that is older than one already taken (reordered) is
    /// refused too, so only ever newer states reach the engine.
    package mutating func open(_ bytes: [UInt8], from source: Source, now: ContinuousClock.Instant) -> (Opened, Output) {
        var out = Output()
        func refuse(_ why: SealedEnvelope.Failure) -> (Opened, Output) {
            envelopesRefused += 1
            out.effects.append(.envelopeRefused(source, why, refused: envelopesRefused))
            return (.refused, out)
        }
        guard let (header, _) = SealedEnvelope.peek(bytes) else { return refuse(.malformed) }
        let id = header.connectionID
        // Whose keys: this source's connection; else its contender's (a controller restarted
        // on the same address, now using the connection it was given: it takes over); else a
        // connection of another address (the same controller moved: the move happens only once
        // the envelope opened under that connection's keys, and the keys move with it).
        var s: Sealing
        var takeover = false
        var movedFrom: Source?
        if let mine = sealing[source], mine.connectionID == id {
            s = mine
        } else if let c = contenderSealing[source], c.connectionID == id {
            s = c
            takeover = true
        } else if sealing[source] == nil, let old = sealedSources[id], old != source, let theirs = sealing[old] {
            s = theirs
            movedFrom = old
        } else {
            return refuse(.malformed)
        }
        let opened: SealedEnvelope
        switch SealedEnvelope.open(bytes, key: s.keys.controllerToReceiver, window: &s.window) {
        case .failure(let why): return refuse(why)
        case .success(let e): opened = e
        }
        if takeover {
            contenderSealing[source] = s
            promote(source, now: now, into: &out)
        } else if let old = movedFrom {
            let name = admission.displayName(of: old)
            sealing[old] = nil
            peerTable.move(from: old, to: source, now: now)
            admission.move(from: old, to: source)
            if let n = helloNonces.removeValue(forKey: old) { helloNonces[source] = n }
            sealedSources[id] = source
            out.effects.append(.moved(from: old, to: source, name: name))
        }
        defer { sealing[source] = s }
        if opened.inner.count == StatePacket.size {
            guard opened.counter > s.lastState else { return refuse(.replayed) }
            s.lastState = opened.counter
            return (.state(opened.inner), out)
        }
        return (.control(opened.inner), out)
    }

    /// May an opened sealed state from `source` drive?
    package func mayDriveSealed(_ source: Source) -> Bool { admission.mayDriveSealed(source) }

    /// One admitted datagram that is not a state packet (or the control datagram an envelope
    /// held, `sealed` true). `unixMillis`: this machine's wall clock (stop-all times are checked
    /// against it).
    package mutating func control(_ bytes: [UInt8], from source: Source, now: ContinuousClock.Instant,
                                 unixMillis: UInt64, sealed: Bool = false) -> Output {
        var out = Output()
        let header = (try? ControlDatagram.decode(bytes))?.header
        if !sealed, let header, peerTable.connectionID(of: source) != 0 {
            // A hello from the address of a live connection (forged, or a controller restarted
            // on the same port) and what follows on its channel go to a channel of their own.
            if header.type == .hello, header.connection == peerTable.peerInstance(of: source) {
                return out   // the accepted controller's own hello again: answered long ago
            }
            if header.type == .hello || (header.connectionID == 0 && contenders.hasChannel(source)
                                          && header.connection == contenders.peerInstance(of: source)) {
                contend(bytes, from: source, now: now, into: &out)
                seal(&out)
                return out
            }
            // A contender that got its accept now uses the connection id it was given: it takes
            // over the address (under `secret` only an envelope can do that, see open()).
            if settings.accept != .secret, header.connectionID != 0, header.connectionID == contenders.connectionID(of: source) {
                promote(source, now: now, into: &out)
            }
        }
        // Under `secret` every connection is sealed: a plain datagram that names one (from any
        // address) is forged or misdirected, and changes nothing — no move, no bye, no pong.
        if settings.accept == .secret, !sealed, let header, header.connectionID != 0 {
            envelopesRefused += 1
            out.effects.append(.envelopeRefused(source, .malformed, refused: envelopesRefused))
            return out
        }
        // Under `secret`, a controller with a connection speaks only in envelopes; a plain hello
        // (a contender, above) and a stop-all (not a controller's) are the exceptions.
        if sealing[source] != nil, !sealed, bytes.count > 3, bytes[3] != ControlType.hello.rawValue,
           bytes[3] != ControlType.stopAll.rawValue {
            // A plain ack may still be on its way from before the proof was checked (it went out
            // with the proof): dropped unread, without a warning. Anything else is counted.
            if bytes[3] == ControlType.ack.rawValue { return out }
            envelopesRefused += 1
            out.effects.append(.envelopeRefused(source, .malformed, refused: envelopesRefused))
            return out
        }
        // The same controller from a new address: a source without a channel whose datagram
        // names the connection of another source's channel (Protocol.md §6.4, "One address").
        // A hello always opens a connection of its own; stop-alls carry none.
        if !peerTable.hasChannel(source), let header,
           ![.hello, .stopAll, .stopAllReply].contains(header.type),
           let old = peerTable.source(withConnectionID: header.connectionID, except: source) {
            let name = admission.displayName(of: old)
            peerTable.move(from: old, to: source, now: now)
            admission.move(from: old, to: source)
            if let n = helloNonces.removeValue(forKey: old) { helloNonces[source] = n }
            out.effects.append(.moved(from: old, to: source, name: name))
        }
        let (incoming, replies) = peerTable.receive(bytes, from: source, now: now)
        for r in replies { out.datagrams.append((source, r)) }
        for item in incoming {
            switch item {
            case .malformed(let error):
                out.effects.append(.malformed(source, error))
            case .restarted, .wrongConnection:
                break
            case .message(let message):
                handle(message, from: source, now: now, unixMillis: unixMillis, into: &out)
            }
        }
        seal(&out)
        return out
    }

    mutating func handle(_ message: ControlMessage, from source: Source, now: ContinuousClock.Instant,
                         unixMillis: UInt64, into out: inout Output) {
        switch message {
        case .hello(let h):
            hello(h, from: source, now: now, into: &out)
        case .proof(let nonce, let mac):
            proof(nonce: nonce, mac: mac, from: source, now: now, into: &out)
        case .bye:
            let name = admission.displayName(of: source)
            admission.bye(from: source)
            helloNonces[source] = nil
            out.effects.append(.left(source, name: name))
        case .stopAll(let command):
            let verdict = stopGuard.consider(command, nowUnixMillis: unixMillis)
            let outcome: ControlMessage.StopAllReply.Outcome
            var text = ""
            switch verdict {
            case .take(let stop):
                out.effects.append(.teacher(stop: stop, from: source))
                outcome = stop ? .stopped : .released
                text = settings.robotID?.target ?? ""
            case .repeated, .answered:
                outcome = stopGuard.holding ? .stopped : .released
                text = settings.robotID?.target ?? ""
            case .refused(let why):
                out.effects.append(.stopRefused(source, why))
                outcome = .refused
                text = why
            }
            var reply = ControlMessage.StopAllReply(nonce: command.nonce, outcome: outcome,
                                                    displayName: WireText(settings.displayName), text: WireText(text))
            if let key = settings.teacherKey { reply.sign(key: key.macKey) }
            out.datagrams.append((source, peerTable.unreliable(.stopAllReply(reply), to: source)))
        case .teacher(let command):
            teacher(command, from: source, unixMillis: unixMillis, into: &out)
        case .pong(let id, let sent):
            out.effects.append(.pong(source, id: id, sentNanos: sent))
        default:
            break   // accept/deny/data/challenge/stop-all replies are not for a receiver
        }
    }

    /// A contender's datagram (a hello, or what follows it on its channel): only its handshake
    /// is heard; nothing it says reaches the connection at its address.
    mutating func contend(_ bytes: [UInt8], from source: Source, now: ContinuousClock.Instant, into out: inout Output) {
        let (incoming, replies) = contenders.receive(bytes, from: source, now: now)
        for r in replies { out.datagrams.append((source, r)) }
        for item in incoming {
            switch item {
            case .malformed(let error): out.effects.append(.malformed(source, error))
            case .message(.hello(let h)): hello(h, from: source, contender: true, now: now, into: &out)
            case .message(.proof(let nonce, let mac)): proof(nonce: nonce, mac: mac, from: source, contender: true, now: now, into: &out)
            default: break   // a contender has no say until it holds a connection of its own
            }
        }
    }

    /// The contender at `source` showed it holds the connection it was given: it takes over the
    /// address — channel, keys, admission — and the old connection there is gone.
    mutating func promote(_ source: Source, now: ContinuousClock.Instant, into out: inout Output) {
        guard let (name, echo) = contenderAccepted.removeValue(forKey: source),
              let channel = contenders.takeChannel(of: source) else { return }
        contenders.forget(source)
        pending[source] = nil
        peerTable.install(channel, for: source, now: now)
        if let old = sealing[source] { sealedSources[old.connectionID] = nil }
        if let new = contenderSealing.removeValue(forKey: source) {
            sealing[source] = new
            sealedSources[new.connectionID] = source
        }
        admission.admit(source, name: name)
        remember(echo, for: source)
        out.effects.append(.accepted(source, name: name))
    }

    mutating func remember(_ echo: UInt64, for source: Source) {
        if helloNonces[source] == nil, helloNonces.count >= Self.capacity { helloNonces.removeValue(forKey: helloNonces.keys.first!) }
        helloNonces[source] = echo
    }

    /// Queues a reliable message on `source`'s channel, or its contender's.
    mutating func send(_ message: ControlMessage, to source: Source, contender: Bool, now: ContinuousClock.Instant) {
        if contender { contenders.send(message, to: source, now: now) } else { peerTable.send(message, to: source, now: now) }
    }

    mutating func hello(_ h: ControlMessage.Hello, from source: Source, contender: Bool = false, now: ContinuousClock.Instant,
                        into out: inout Output) {
        // A guess at the pairing code costs an attempt; a hello without one guesses nothing.
        if settings.accept == .paired, !h.pairingCode.isEmpty, !attempts.allow(source, now: now) {
            throttle(source, name: h.displayName, echo: h.nonce, contender: contender, now: now, into: &out)
            return
        }
        switch admission.decide(h) {
        case .accept:
            if contender {
                remember(contender: source, name: h.displayName, echo: h.nonce)
            } else {
                admission.admit(source, name: h.displayName)
                remember(h.nonce, for: source)
            }
            accept(source, name: h.displayName, echo: h.nonce, contender: contender, now: now, into: &out)
        case .challenge:
            if pending[source] == nil, pending.count >= Self.capacity { pending.removeValue(forKey: pending.keys.first!) }
            let nonce = SecretHandshake.nonce()
            pending[source] = (nonce, h.displayName, h.nonce)
            send(.challenge(nonce: nonce, echo: h.nonce), to: source, contender: contender, now: now)
        case .deny(var deny):
            deny.echo = h.nonce
            if deny.reason == .wrongPairingCode {
                attempts.failedAttempt()
                out.effects.append(.attemptFailed(source, what: "pairing code", failed: attempts.failed))
            }
            denied(source, name: h.displayName, deny, contender: contender, now: now, into: &out)
        }
    }

    mutating func remember(contender source: Source, name: WireText, echo: UInt64) {
        if contenderAccepted[source] == nil, contenderAccepted.count >= contenders.options.capacity {
            let victim = contenderAccepted.keys.first!
            contenderAccepted[victim] = nil
            contenderSealing[victim] = nil
        }
        contenderAccepted[source] = (name, echo)
    }

    mutating func denied(_ source: Source, name: WireText, _ deny: ControlMessage.Deny, contender: Bool, now: ContinuousClock.Instant,
                         into out: inout Output) {
        send(.deny(deny), to: source, contender: contender, now: now)
        out.effects.append(contender ? .contenderDenied(source, name: name, deny) : .denied(source, name: name, deny))
    }

    mutating func proof(nonce: [UInt8], mac: [UInt8], from source: Source, contender: Bool = false, now: ContinuousClock.Instant,
                        into out: inout Output) {
        guard settings.accept == .secret, let secret = settings.secret, let challenge = pending[source] else { return }
        guard attempts.allow(source, now: now) else {
            pending[source] = nil
            throttle(source, name: challenge.name, echo: challenge.echo, contender: contender, now: now, into: &out)
            return
        }
        pending[source] = nil
        guard SecretHandshake.verify(mac, secret: secret, receiverNonce: challenge.nonce, controllerNonce: nonce) else {
            attempts.failedAttempt()
            out.effects.append(.attemptFailed(source, what: "secret", failed: attempts.failed))
            let deny = ControlMessage.Deny(reason: .wrongPairingCode,
                                           text: "wrong secret: check the 12 words against the robot's screen", echo: challenge.echo)
            denied(source, name: challenge.name, deny, contender: contender, now: now, into: &out)
            return
        }
        let id = Self.newConnectionID()
        let keys = SecretHandshake.keys(secret: secret, receiverNonce: challenge.nonce, controllerNonce: nonce, connectionID: id)
        if contender {
            // Kept aside until the contender's first envelope opens under them (open()).
            remember(contender: source, name: challenge.name, echo: challenge.echo)
            contenderSealing[source] = Sealing(connectionID: id, keys: keys)
        } else {
            if sealing[source] == nil, sealing.count >= Self.capacity, let victim = sealing.keys.first {
                sealedSources[sealing.removeValue(forKey: victim)!.connectionID] = nil
            }
            if let old = sealing[source] { sealedSources[old.connectionID] = nil }
            sealing[source] = Sealing(connectionID: id, keys: keys)
            sealedSources[id] = source
            admission.admit(source, name: challenge.name)
            remember(challenge.echo, for: source)
        }
        accept(source, name: challenge.name, connectionID: id, echo: challenge.echo, contender: contender, now: now, into: &out)
    }

    mutating func accept(_ source: Source, name: WireText, connectionID: UInt64? = nil, echo: UInt64, contender: Bool,
                         now: ContinuousClock.Instant, into out: inout Output) {
        let id = connectionID ?? Self.newConnectionID()
        let accept = ControlMessage.accept(.init(peerID: settings.peerID, displayName: WireText(settings.displayName),
                                                 failsafeMilliseconds: UInt16(clamping: settings.failsafe.milliseconds),
                                                 rateHertz: UInt16(SendRate.standardHz), echo: echo))
        if contender {
            contenders.assign(connectionID: id, to: source, now: now)
            contenders.send(accept, to: source, now: now)
        } else {
            peerTable.assign(connectionID: id, to: source, now: now)
            peerTable.send(accept, to: source, now: now)
            out.effects.append(.accepted(source, name: name))
        }
    }

    mutating func throttle(_ source: Source, name: WireText, echo: UInt64, contender: Bool, now: ContinuousClock.Instant,
                           into out: inout Output) {
        let deny = ControlMessage.Deny(reason: .rateLimited, text: "too many attempts: wait a minute, then try again", echo: echo)
        out.effects.append(.attemptThrottled(source, throttled: attempts.throttled))
        denied(source, name: name, deny, contender: contender, now: now, into: &out)
    }

    /// A connection id: 64 bits from the system's CSPRNG (getrandom(2)), never 0.
    static func newConnectionID() -> UInt64 {
        var rng = SystemRandomNumberGenerator()
        return UInt64.random(in: 1...UInt64.max, using: &rng)
    }

    /// Seals every datagram of an authenticated connection under that connection's keys — the
    /// datagram names it in its version-2 header. Anything else goes out plain: a contender's
    /// challenge or deny is never sealed under the keys of the connection at its address.
    mutating func seal(_ out: inout Output) {
        guard !sealing.isEmpty || !contenderSealing.isEmpty else { return }
        for i in out.datagrams.indices {
            let (to, datagram) = out.datagrams[i]
            guard datagram.count <= SealedEnvelope.maxInner, let id = ControlHeader.connectionID(in: datagram) else { continue }
            if var s = sealing[to], s.connectionID == id {
                out.datagrams[i].1 = s.sealNext(datagram, instance: peerTable.connection)
                sealing[to] = s
            } else if var s = contenderSealing[to], s.connectionID == id {
                out.datagrams[i].1 = s.sealNext(datagram, instance: peerTable.connection)
                contenderSealing[to] = s
            }
        }
    }

    /// Retransmissions and owed acks.
    package mutating func poll(now: ContinuousClock.Instant) -> Output {
        var out = Output()
        out.datagrams = peerTable.poll(now: now).datagrams + contenders.poll(now: now).datagrams
        seal(&out)
        return out
    }

    package func deadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        switch (peerTable.deadline(now: now), contenders.deadline(now: now)) {
        case let (a?, b?): min(a, b)
        case let (a?, nil): a
        case let (nil, b): b
        }
    }

    /// Whether ``poll(now:)`` has anything to do now (else it returns nothing and changes
    /// nothing): the receive loop skips the call on most wake-ups.
    package func pollDue(now: ContinuousClock.Instant) -> Bool {
        peerTable.pollDue(now: now) || contenders.pollDue(now: now)
    }

    /// For the status line: the pairing code under `--accept paired`, failed attempts and the
    /// rate-limit count.
    package var statusParts: [String] {
        var parts: [String] = []
        if settings.accept == .paired { parts.append("pairing code \(settings.pairingCode)") }
        if settings.accept == .secret { parts.append("secret") }
        if attempts.failed > 0 { parts.append("wrong codes \(attempts.failed)") }
        if attempts.throttled > 0 { parts.append("throttled \(attempts.throttled)") }
        if peerTable.limited > 0 { parts.append("limited \(peerTable.limited)") }
        return parts
    }
}

