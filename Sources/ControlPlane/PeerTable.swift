import ControlWire
import SystemIO

/// The control-message side of one UDP port that many peers talk to (a receiver, the game host),
/// as a value type: the caller feeds it datagrams and the time and transmits what it returns.
///
/// - Every source has a token bucket (``admit(_:at:)``), checked before anything is decoded.
/// - A source that sends a reliable message or an ack gets a ``ReliableChannel``; plain 8-byte
///   senders and one-off stop-all senders never do.
/// - A `ping` is answered with a `pong` at once (in the returned replies).
/// - The table is bounded (``Options/capacity``): a new source in a full table evicts the
///   stalest fourth, sources without a channel first. Peers silent for
///   ``Options/idleTimeout`` with nothing left to send are dropped.
///
/// Trap: evicting a channel that is still in use breaks that peer's stream (its next sequence is
/// far beyond a fresh channel's window) until it restarts with a new connection id. The capacity
/// is far above a classroom, so only a flood of spoofed source ports can cause that.
package struct PeerTable<Source: Hashable & Sendable>: Sendable {
    package struct Options: Sendable {
        package var capacity = 1024
        /// Token bucket per source: datagrams per second and burst (Protocol.md §7.4).
        package var rate: Double = 2000
        package var burst: Double = 200
        package var idleTimeout: Duration = .seconds(120)
        package var channel = ReliableChannel.Options()
        /// Memory all channels together may hold for out-of-order datagrams and partial messages
        /// (``ReliableChannel/bufferedBytes``). Beyond it the stalest peers' buffers — never the
        /// protected one's (the owner) — are dropped until a fourth is free again: a thousand
        /// sources sending 256 out-of-order fragments each cannot grow the receiver.
        package var bufferCap = 8 << 20
        /// Reliable datagrams queued to one peer (in flight or waiting for window space), and to
        /// all peers together (each at most 1 KiB: 8 MiB). A peer that never acknowledges —
        /// a spoofed source sending hellos — cannot grow the send queues past these; the
        /// protected peer (the owner) is exempt. Messages beyond are dropped and counted
        /// (``sendsDropped``).
        package var maxBacklog = 64
        package var totalBacklog = 8192
        package init() {}
    }

    /// What arrived from a peer, in order.
    package enum Incoming: Hashable, Sendable {
        /// A whole reliable message (in order, once), or an unreliable one (pong, stop-all, …).
        case message(ControlMessage)
        /// The peer's connection id changed: it restarted.
        case restarted
        /// The datagram or a reassembled message did not decode (counted in ``refused``).
        case malformed(ControlMessageError)
        /// A control datagram without the source's connection id (counted in ``wrongConnection``):
        /// dropped, nothing in it was looked at.
        case wrongConnection
    }

    @usableFromInline
    struct Peer: Sendable {
        @usableFromInline var bucket: TokenBucket
        @usableFromInline var channel: ReliableChannel?
        @usableFromInline var lastSeen: Tick

        @usableFromInline
        init(bucket: TokenBucket, channel: ReliableChannel?, lastSeen: Tick) {
            self.bucket = bucket
            self.channel = channel
            self.lastSeen = lastSeen
        }
    }

    package let connection: UInt32
    package let options: Options
    @usableFromInline var peers: [Source: Peer] = [:]
    /// Sources whose channel may have something for ``poll(now:)``.
    var busy: Set<Source> = []
    var nextCleanup: ContinuousClock.Instant?

    /// Datagrams dropped by the rate limit.
    package var limited: Int { limitedCount }
    @usableFromInline var limitedCount = 0
    /// Control datagrams or messages that did not decode.
    package private(set) var refused = 0
    /// Sources dropped to stay under the capacity.
    package private(set) var evicted = 0
    /// Control datagrams from a source with a connection that did not carry its connection id.
    package private(set) var wrongConnection = 0
    /// Reliable messages not queued because a send queue was full (``Options/maxBacklog``).
    package private(set) var sendsDropped = 0
    /// Peers whose reordering buffers were dropped to stay under ``Options/bufferCap``.
    package private(set) var buffersDropped = 0
    /// Bytes held by every channel for reordering (≤ ``Options/bufferCap`` after each call).
    package private(set) var bufferedBytes = 0
    /// The source whose buffers are never dropped for memory (the receiver sets its owner).
    package var protected: Source?

    package init(connection: UInt32, options: Options = Options()) {
        precondition(connection != 0, "connection id 0 is reserved")
        precondition(options.capacity >= 4)
        self.connection = connection
        self.options = options
    }

    package var count: Int { peers.count }

    /// The connection id `source`'s channel carries (0: none yet).
    package func connectionID(of source: Source) -> UInt64 { peers[source]?.channel?.connectionID ?? 0 }

    /// Gives `source`'s channel its connection id (made if missing): from now on every datagram
    /// of it carries the id, and every control datagram from `source` must carry it too.
    package mutating func assign(connectionID: UInt64, to source: Source, now: ContinuousClock.Instant) {
        if peers[source] == nil {
            makeRoom()
            peers[source] = Peer(bucket: TokenBucket(rate: options.rate, burst: options.burst), channel: nil, lastSeen: Tick(now))
        }
        if peers[source]!.channel == nil {
            peers[source]!.channel = ReliableChannel(connection: connection, options: options.channel)
        }
        peers[source]!.channel!.connectionID = connectionID
    }
    package func hasChannel(_ source: Source) -> Bool { peers[source]?.channel != nil }
    /// The sender instance `source`'s channel last heard from it (nil: no channel, or nothing heard).
    package func peerInstance(of source: Source) -> UInt32? { peers[source]?.channel?.peerConnection }

    /// Takes `source`'s channel out of this table (the source stays, with its bucket).
    package mutating func takeChannel(of source: Source) -> ReliableChannel? {
        guard let channel = peers[source]?.channel else { return nil }
        bufferedBytes -= channel.bufferedBytes
        peers[source]!.channel = nil
        busy.remove(source)
        return channel
    }

    /// Gives `source` `channel` (taken from another table), replacing any channel it had.
    package mutating func install(_ channel: ReliableChannel, for source: Source, now: ContinuousClock.Instant) {
        if peers[source] == nil {
            makeRoom()
            peers[source] = Peer(bucket: TokenBucket(rate: options.rate, burst: options.burst), channel: nil, lastSeen: Tick(now))
        }
        bufferedBytes += channel.bufferedBytes - (peers[source]!.channel?.bufferedBytes ?? 0)
        peers[source]!.channel = channel
        peers[source]!.lastSeen = Tick(now)
        busy.insert(source)
        if bufferedBytes > options.bufferCap { shed() }
    }
    /// Smoothed round-trip time to `source`, once measured by its channel.
    package func roundTrip(to source: Source) -> Duration? { peers[source]?.channel?.roundTrip }
    /// Reliable datagrams to `source` not yet acknowledged or not yet sent.
    package func backlog(to source: Source) -> Int { peers[source]?.channel?.backlog ?? 0 }
    /// Reliable datagrams not yet acknowledged, over every peer.
    package var backlog: Int { busy.reduce(0) { $0 + (peers[$1]?.channel?.backlog ?? 0) } }

    /// The rate limit: one token from `source`'s bucket. False = drop the datagram undecoded.
    /// Called for every datagram: one hash lookup for a known source, and `@inlinable` so that it
    /// is specialised for the caller's address type.
    @inlinable
    package mutating func admit(_ source: Source, at now: Tick) -> Bool {
        let ok: Bool
        if let index = peers.index(forKey: source) {
            ok = peers.values[index].bucket.take(at: now)
            peers.values[index].lastSeen = now
        } else {
            makeRoom()
            var peer = Peer(bucket: TokenBucket(rate: options.rate, burst: options.burst), channel: nil, lastSeen: now)
            ok = peer.bucket.take(at: now)
            peers[source] = peer
        }
        if !ok { limitedCount += 1 }
        return ok
    }

    package mutating func admit(_ source: Source, now: ContinuousClock.Instant) -> Bool { admit(source, at: Tick(now)) }

    /// One admitted control datagram (any length other than a state packet's). Returns what
    /// arrived and the replies to send back to `source` at once (a pong).
    package mutating func receive(_ bytes: [UInt8], from source: Source,
                                 now: ContinuousClock.Instant) -> (incoming: [Incoming], replies: [[UInt8]]) {
        let datagram: ControlDatagram
        do {
            datagram = try ControlDatagram.decode(bytes)
        } catch {
            refused += 1
            return ([.malformed(error)], [])
        }
        if peers[source] == nil {
            makeRoom()
            peers[source] = Peer(bucket: TokenBucket(rate: options.rate, burst: options.burst), channel: nil, lastSeen: Tick(now))
        }
        peers[source]!.lastSeen = Tick(now)
        let type = datagram.header.type
        // After the accept every datagram must carry the connection id (a hello may not: it is
        // a restarted controller, or a retransmission of the hello that was accepted).
        if let expected = peers[source]!.channel?.connectionID, expected != 0,
           datagram.header.connectionID != expected, type != .hello {
            wrongConnection += 1
            return ([.wrongConnection], [])
        }
        var incoming: [Incoming] = []
        var replies: [[UInt8]] = []
        if !type.isReliable {
            // Unreliable payloads are whole in one datagram: decode here.
            do {
                let message = try ControlMessage.decode(type: type, payload: datagram.payload)
                switch message {
                case .ping(let id, let t):
                    replies.append(unreliable(.pong(id: id, sentNanos: t), to: source))
                case .ack:
                    break
                default:
                    incoming.append(.message(message))
                }
            } catch {
                refused += 1
                return ([.malformed(error)], [])
            }
            // Pings, pongs and acks from a peer with a channel carry its cumulative ack.
            guard peers[source]!.channel != nil else { return (incoming, replies) }
        }
        if peers[source]!.channel == nil {
            peers[source]!.channel = ReliableChannel(connection: connection, options: options.channel)
        }
        let heldBefore = peers[source]!.channel!.bufferedBytes
        let events = peers[source]!.channel!.receive(datagram, now: now)
        bufferedBytes += peers[source]!.channel!.bufferedBytes - heldBefore
        if bufferedBytes > options.bufferCap { shed() }
        for event in events {
            switch event {
            case .delivered(let m): incoming.append(.message(m))
            case .malformed(let e): refused += 1; incoming.append(.malformed(e))
            case .peerRestarted: incoming.insert(.restarted, at: 0)
            case .peerUnreachable: break
            }
        }
        busy.insert(source)
        return (incoming, replies)
    }

    /// Queues a reliable message to `source` (a channel is made if it has none). Messages over
    /// 64 KiB are refused by the channel and dropped here (nothing the peers send is that big).
    package mutating func send(_ message: ControlMessage, to source: Source, now: ContinuousClock.Instant) {
        if peers[source] == nil {
            makeRoom()
            peers[source] = Peer(bucket: TokenBucket(rate: options.rate, burst: options.burst), channel: nil, lastSeen: Tick(now))
        }
        if peers[source]!.channel == nil {
            peers[source]!.channel = ReliableChannel(connection: connection, options: options.channel)
        }
        if source != protected, peers[source]!.channel!.backlog >= options.maxBacklog || backlog >= options.totalBacklog {
            sendsDropped += 1
            return
        }
        do {
            try peers[source]!.channel!.send(message)
            busy.insert(source)
        } catch {
            refused += 1
        }
    }

    /// An unreliable datagram to `source`, carrying its channel's cumulative ack if it has one.
    package func unreliable(_ message: ControlMessage, to source: Source) -> [UInt8] {
        if let channel = peers[source]?.channel { return channel.unreliable(message) }
        let header = ControlHeader(type: message.type, connection: connection)
        return ControlDatagram(header: header, payload: message.encodePayload()[...]).encode()
    }

    /// Retransmissions, new datagrams within each window, owed acks; and the peers that stopped
    /// answering (their channel gave up; it stays, so their sequence numbers stay known).
    package mutating func poll(now: ContinuousClock.Instant) -> (datagrams: [(Source, [UInt8])], unreachable: [Source]) {
        var out: [(Source, [UInt8])] = []
        var gone: [Source] = []
        for source in busy {
            guard var channel = peers[source]?.channel else { busy.remove(source); continue }
            let (datagrams, events) = channel.poll(now: now)
            for d in datagrams { out.append((source, d)) }
            if events.contains(.peerUnreachable) { gone.append(source) }
            if channel.nextDeadline(now: now) == nil { busy.remove(source) }
            peers[source]!.channel = channel
        }
        cleanUp(now: now)
        return (out, gone)
    }

    /// Whether ``poll(now:)`` would do anything now: a channel may have something to send, or
    /// the idle sweep is due. The receive loop asks on every wake-up, so a table with nothing in
    /// flight costs two comparisons there, not a poll.
    package func pollDue(now: ContinuousClock.Instant) -> Bool {
        guard busy.isEmpty, let nextCleanup else { return true }
        return now >= nextCleanup
    }

    /// When ``poll(now:)`` has work: now, a retransmission time, or nil when idle.
    package func deadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        if busy.isEmpty { return nil }
        var earliest: ContinuousClock.Instant?
        for source in busy {
            guard let d = peers[source]?.channel?.nextDeadline(now: now) else { continue }
            if d <= now { return now }
            earliest = earliest.map { min($0, d) } ?? d
        }
        return earliest
    }

    /// The source whose channel carries connection id `id` (the receiver-chosen 64-bit id of a
    /// version-2 header), other than `except`: the same controller seen from another address
    /// (Protocol.md §6.4, "One address"). Never matches 0.
    package func source(withConnectionID id: UInt64, except: Source) -> Source? {
        guard id != 0 else { return nil }
        return peers.first { $0.key != except && $0.value.channel?.connectionID == id }?.key
    }

    /// Moves `old`'s channel (its connection and sequence state) to `new`, the same peer on a
    /// new address. `new` keeps its own rate-limit bucket; `old` is forgotten.
    package mutating func move(from old: Source, to new: Source, now: ContinuousClock.Instant) {
        guard let channel = peers[old]?.channel else { return }
        if peers[new] == nil {
            makeRoom()
            peers[new] = Peer(bucket: TokenBucket(rate: options.rate, burst: options.burst), channel: nil, lastSeen: Tick(now))
        }
        peers[new]!.channel = channel
        peers[new]!.lastSeen = Tick(now)
        if busy.contains(old) { busy.insert(new) }
        forget(old)
    }

    /// Forgets `source` entirely (bucket and channel).
    package mutating func forget(_ source: Source) {
        bufferedBytes -= peers[source]?.channel?.bufferedBytes ?? 0
        peers[source] = nil
        busy.remove(source)
    }

    /// Over the memory cap: drop the reordering buffers of the stalest peers (not the protected
    /// one) until a fourth of the cap is free. Sorting is paid once per fourth of the cap.
    mutating func shed() {
        let goal = options.bufferCap - options.bufferCap / 4
        let holders = peers.filter { $0.key != protected && ($0.value.channel?.bufferedBytes ?? 0) > 0 }
            .sorted { $0.value.lastSeen < $1.value.lastSeen }
        for (source, _) in holders {
            guard bufferedBytes > goal else { break }
            bufferedBytes -= peers[source]!.channel!.bufferedBytes
            peers[source]!.channel!.dropBuffered()
            buffersDropped += 1
        }
    }

    /// Drops peers idle past the timeout with nothing to send; runs at most every 10 s.
    mutating func cleanUp(now: ContinuousClock.Instant) {
        guard let next = nextCleanup else { nextCleanup = now + .seconds(10); return }
        guard now >= next else { return }
        nextCleanup = now + .seconds(10)
        let tick = Tick(now), idle = Tick.nanoseconds(options.idleTimeout)
        let stale = peers.filter { tick - $0.value.lastSeen > idle && ($0.value.channel?.backlog ?? 0) == 0 }
        for source in stale.keys { forget(source) }
    }

    /// Before adding a source to a full table: evict the stalest fourth, channel-less first.
    @usableFromInline
    mutating func makeRoom() {
        guard peers.count >= options.capacity else { return }
        let victims = peers
            .sorted { a, b in
                let (ca, cb) = (a.value.channel != nil, b.value.channel != nil)
                return ca != cb ? !ca : a.value.lastSeen < b.value.lastSeen
            }
            .prefix(max(1, options.capacity / 4))
        for victim in victims { forget(victim.key) }
        evicted += victims.count
    }
}
