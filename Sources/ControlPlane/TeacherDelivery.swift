import ControlWire
import RemoteWire

/// The teacher's datagrams to receivers, as a value (Protocol.md §7.6, §7.10): the one place
/// that builds a stop-all or a teacher command, gives it its nonce, signs it, aims it at a
/// target and repeats it until it is answered. `stop-all` (``StopAllMachine``) and the
/// dashboard (the web server's teacher link) both send through it; each keeps what it makes
/// of the replies (they verify them: a reply is checked against the key, not against this).
///
/// A command goes out at the next ``due(now:)``, then again every ``Settings/spacing`` until
/// it has gone out `times` times or its reply came (``answered(_:from:)``). `Peer` is how the
/// caller names a receiver (an address, a dashboard row): the datagram is handed back with it.
///
/// The target rule (§7.6.1), kept here so no caller can break it: a command is aimed at one
/// receiver (`id:` and its robot id, or its display name) — the empty target (every receiver
/// of the session) is for a stop alone, which can only stop a robot wherever it ends up, and
/// for the unsigned query, which changes nothing. A release, identify, kick, lock or unlock for
/// the empty target is refused (``send(_:to:target:times:nonce:wallMillis:now:)`` returns nil),
/// as is a teacher command without a key (no receiver would take it).
package struct TeacherDelivery<Peer: Hashable & Sendable>: Sendable {
    package enum Command: Hashable, Sendable {
        /// An unsigned stop-all `query`: changes nothing; its reply names the receiver.
        case query
        case stop
        case release
        /// A signed `teacher` command (watch, identify, kick, lock, unlock) with its argument.
        case teacher(TeacherCommand.Action, argument: String)
    }

    /// How often the broadcast stop (Protocol.md §7.6: every host on the links, before any
    /// lookup) goes out, ``Settings/spacing`` apart: nobody answers it for all, so it is not
    /// repeated until answered.
    package static var broadcastTimes: Int { 3 }

    package struct Settings: Sendable {
        package var session: String
        /// The teacher key's MAC key (``TeacherKey/macKey``); nil: stop-alls go unsigned (for
        /// receivers without a key) and teacher commands are refused.
        package var macKey: [UInt8]?
        /// The connection id in every datagram's header.
        package var connection: UInt32
        /// Between two sends of one command.
        package var spacing: Duration = .milliseconds(50)
        /// The nonces remembered per peer, answered or not: a reply to an older one is not ours.
        package var remembered = 32

        package init(session: String, macKey: [UInt8]?, connection: UInt32) {
            self.session = session
            self.macKey = macKey
            self.connection = connection
        }
    }

    /// One command sent (or to be sent) to one peer.
    package struct Sent: Sendable {
        package var peer: Peer
        package var nonce: UInt64
        package var command: Command
        package var datagram: [UInt8]
        /// How many times it went out so far.
        package var count = 0
        package var times: Int
        package var next: ContinuousClock.Instant
        package var answered = false
        /// When it was queued, among all peers' commands: the order ``due(now:)`` keeps.
        var order: Int

        var isPending: Bool { !answered && count < times }
    }

    package let settings: Settings
    /// Per peer, its last ``Settings/remembered`` commands, oldest first.
    private var sent: [Peer: [Sent]] = [:]
    private var queued = 0

    package init(settings: Settings) {
        self.settings = settings
    }

    /// Queues `command` for `peer`, aimed at `target`, to go out `times` times in all (at least
    /// once) until answered. Returns `nonce`, or nil when refused by the target rule (see the
    /// type) or when `nonce` is already in use for `peer`.
    @discardableResult
    package mutating func send(_ command: Command, to peer: Peer, target: String, times: Int, nonce: UInt64, wallMillis: UInt64,
                               now: ContinuousClock.Instant) -> UInt64? {
        guard Self.mayAim(command, at: target, signed: settings.macKey != nil),
              !(sent[peer]?.contains { $0.nonce == nonce } ?? false) else { return nil }
        let message: ControlMessage
        switch command {
        case .query:
            message = .stopAll(.init(action: .query, unixMillis: wallMillis, nonce: nonce, session: WireText(settings.session)))
        case .stop, .release:
            var c = ControlMessage.StopAll(action: command == .stop ? .stop : .release, unixMillis: wallMillis, nonce: nonce,
                                           session: WireText(settings.session), target: WireText(target))
            if let key = settings.macKey { c.sign(key: key) }
            message = .stopAll(c)
        case .teacher(let action, let argument):
            guard let key = settings.macKey else { return nil }
            var c = TeacherCommand(action: action, unixMillis: wallMillis, nonce: nonce, session: WireText(settings.session),
                                   target: WireText(target), argument: WireText(argument))
            c.sign(key: key)
            message = .teacher(c)
        }
        let datagram = ControlDatagram(header: ControlHeader(type: message.type, connection: settings.connection),
                                       payload: message.encodePayload()[...]).encode()
        var list = sent[peer] ?? []
        list.append(Sent(peer: peer, nonce: nonce, command: command, datagram: datagram, times: max(1, times), next: now, order: queued))
        queued += 1
        if list.count > settings.remembered { list.removeFirst(list.count - settings.remembered) }
        sent[peer] = list
        return nonce
    }

    /// Whether `command` may go to `target`: the empty target only for a stop or the query.
    package static func mayAim(_ command: Command, at target: String, signed: Bool) -> Bool {
        switch command {
        case .query, .stop: true
        case .release: !target.isEmpty
        case .teacher: signed && !target.isEmpty
        }
    }

    /// The datagrams due at `now`, each with its peer, in the order they were queued.
    package mutating func due(now: ContinuousClock.Instant) -> [(datagram: [UInt8], to: Peer)] {
        var out: [(order: Int, datagram: [UInt8], to: Peer)] = []
        for peer in sent.keys {
            for i in sent[peer]!.indices where sent[peer]![i].isPending && sent[peer]![i].next <= now {
                out.append((sent[peer]![i].order, sent[peer]![i].datagram, peer))
                sent[peer]![i].count += 1
                sent[peer]![i].next = now + settings.spacing
            }
        }
        return out.sorted { $0.order < $1.order }.map { ($0.datagram, $0.to) }
    }

    /// When ``due(now:)`` has something to send next; nil: nothing is pending.
    package var nextDeadline: ContinuousClock.Instant? {
        sent.values.lazy.flatMap { $0 }.filter(\.isPending).map(\.next).min()
    }

    /// A reply from `peer` answering `nonce` came: no more repeats of it. Returns the command it
    /// answers, or nil when `nonce` is not one of the last sent to `peer` (not ours).
    @discardableResult
    package mutating func answered(_ nonce: UInt64, from peer: Peer) -> Command? {
        guard let i = sent[peer]?.firstIndex(where: { $0.nonce == nonce }) else { return nil }
        sent[peer]![i].answered = true
        return sent[peer]![i].command
    }

    /// The command `nonce` was to `peer`, answered or not; nil: not one of the last sent to it.
    package func command(_ nonce: UInt64, to peer: Peer) -> Command? {
        sent[peer]?.first { $0.nonce == nonce }?.command
    }

    /// How many times `nonce` has gone out to `peer`.
    package func count(_ nonce: UInt64, to peer: Peer) -> Int {
        sent[peer]?.first { $0.nonce == nonce }?.count ?? 0
    }

    /// Stops repeating `nonce` to `peer` (it is still recognised if answered).
    package mutating func cancel(_ nonce: UInt64, to peer: Peer) {
        guard let i = sent[peer]?.firstIndex(where: { $0.nonce == nonce }) else { return }
        sent[peer]![i].times = sent[peer]![i].count
    }

    /// `nonce` goes to `peer` now instead of `from`, from its first send again (the receiver
    /// was found at another address before it answered).
    package mutating func move(_ nonce: UInt64, from old: Peer, to peer: Peer, now: ContinuousClock.Instant) {
        guard let i = sent[old]?.firstIndex(where: { $0.nonce == nonce }) else { return }
        var s = sent[old]!.remove(at: i)
        s.peer = peer
        s.count = 0
        s.answered = false
        s.next = now
        sent[peer, default: []].append(s)
    }

    /// Forgets every command to `peer` (its socket or address is gone: nothing it says later counts).
    package mutating func forget(_ peer: Peer) {
        sent[peer] = nil
    }
}
