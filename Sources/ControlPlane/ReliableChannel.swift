import ControlWire

/// Reliable, ordered delivery of control messages over UDP with one peer — GameKit's
/// "reliable" mode — as a value-type state machine: the caller feeds it datagrams and the time,
/// and transmits what ``poll(now:)`` returns. No I/O, no clock of its own.
///
/// - Every reliable datagram has a sequence number (1, 2, 3…) on its connection.
/// - The receiving side acknowledges cumulatively in every header and selectively (a 64-bit
///   map of the next sequences) in an `ack` message; it drops duplicates and delivers in order.
/// - The sending side keeps at most ``Options/window`` datagrams in flight, retransmits each
///   one whose timer expires with exponential back-off (RTO from smoothed RTT, RFC 6298 style,
///   clamped to `minRTO...maxRTO`), and gives up on the peer after ``Options/maxRetries``.
/// - A message up to 64 KiB is split into fragments of at most 1004 payload bytes on consecutive
///   sequence numbers and reassembled before delivery.
/// State packets never pass through here: they are never queued behind reliable traffic.
package struct ReliableChannel: Sendable {
    package static let maxMessage = ControlHeader.maxMessage
    package static let maxFragments = ControlHeader.maxFragments

    package struct Options: Sendable {
        package var window = 64
        package var minRTO: Duration = .milliseconds(40)
        package var maxRTO: Duration = .seconds(2)
        package var initialRTO: Duration = .milliseconds(200)
        package var maxRetries = 12
        /// How far ahead of the next expected sequence out-of-order datagrams are kept.
        package var receiveWindow: UInt32 = 256
        package init() {}
    }

    package enum Event: Hashable, Sendable {
        /// A whole message arrived, in order, exactly once.
        case delivered(ControlMessage)
        /// A reliable message arrived whole but its payload did not decode (dropped).
        case malformed(ControlMessageError)
        /// Retransmissions exhausted: the peer is gone.
        case peerUnreachable
        /// The peer's connection id changed: it restarted; sequence state was reset.
        case peerRestarted
    }

    struct InFlight: Sendable {
        var datagram: ControlDatagram
        var firstSent: ContinuousClock.Instant
        var deadline: ContinuousClock.Instant
        var retries: Int
    }

    package let connection: UInt32
    package var options: Options
    package private(set) var peerConnection: UInt32?
    /// The receiver-chosen connection id every datagram of this channel carries (version-2
    /// header), or 0 before there is one (version 1). Set by the owner of the channel: the
    /// receiver when it accepts, the controller when the accept arrives. Datagrams already
    /// queued or in flight take it from their next (re)transmission on.
    package var connectionID: UInt64 = 0

    // Sending side.
    var nextSequence: UInt32 = 1
    var unsent: [ControlDatagram] = []
    var inFlight: [UInt32: InFlight] = [:]
    var srtt: Duration?
    var rttvar: Duration = .zero
    var rto: Duration
    // Receiving side.
    var received: UInt32 = 0
    var outOfOrder: [UInt32: ControlDatagram] = [:]
    var partial: [ControlDatagram] = []
    var ackOwed = false
    /// Bytes held for reordering and reassembly (``bufferedBytes``).
    var held = 0
    /// What one held datagram costs beyond its payload (the array, the dictionary slot, the header).
    static let heldOverhead = 128

    package private(set) var stats = Stats()
    package struct Stats: Hashable, Sendable {
        package var sent = 0, retransmitted = 0, delivered = 0, duplicates = 0, acked = 0
    }

    package init(connection: UInt32, options: Options = Options()) {
        precondition(connection != 0, "connection id 0 is reserved")
        self.connection = connection
        self.options = options
        rto = options.initialRTO
    }

    /// Smoothed round-trip time, once measured.
    package var roundTrip: Duration? { srtt }
    /// Datagrams sent but not yet acknowledged, plus those waiting for window space.
    package var backlog: Int { inFlight.count + unsent.count }
    /// Memory held for the peer's out-of-order datagrams and partial messages (approximate:
    /// payload bytes plus a fixed cost per datagram). What a peer can make us hold; a
    /// ``PeerTable`` caps the sum over all peers.
    package var bufferedBytes: Int { held }

    /// Forgets every out-of-order datagram and partial message (memory pressure): the peer's
    /// reliable sender retransmits what it still wants delivered.
    package mutating func dropBuffered() {
        outOfOrder = [:]
        partial = []
        held = 0
    }

    static func cost(_ d: ControlDatagram) -> Int { d.payload.count + heldOverhead }

    /// Queues a reliable message. Large `data` is fragmented. Throws if it exceeds 64 KiB.
    package mutating func send(_ message: ControlMessage) throws(ControlMessageError) {
        precondition(message.type.isReliable, "\(message.type) is not a reliable message")
        let payload = message.encodePayload()
        guard payload.count <= Self.maxMessage + 1 else {
            throw ControlMessageError(.tooLarge, at: 0, bytes: Array(payload.prefix(64)))
        }
        let size = ControlHeader.maxPayload
        let count = max(1, (payload.count + size - 1) / size)
        for i in 0..<count {
            let chunk = payload[min(payload.count, i * size)..<min(payload.count, (i + 1) * size)]
            let header = ControlHeader(type: message.type, connection: connection, sequence: nextSequence,
                                       fragmentIndex: UInt16(i), fragmentCount: UInt16(count), connectionID: connectionID)
            nextSequence &+= 1
            if nextSequence == 0 { nextSequence = 1 }
            unsent.append(ControlDatagram(header: header, payload: chunk))
        }
    }

    /// Builds an unreliable datagram (ping, pong, stop-all) carrying the current cumulative ack.
    package func unreliable(_ message: ControlMessage) -> [UInt8] {
        precondition(!message.type.isReliable, "\(message.type) is a reliable message")
        let header = ControlHeader(type: message.type, connection: connection, ack: received, connectionID: connectionID)
        return ControlDatagram(header: header, payload: message.encodePayload()[...]).encode()
    }

    /// Takes one datagram from the peer. Returns what became deliverable.
    package mutating func receive(_ datagram: ControlDatagram, now: ContinuousClock.Instant) -> [Event] {
        var events: [Event] = []
        let header = datagram.header
        if peerConnection != header.connection {
            if peerConnection != nil {
                events.append(.peerRestarted)
                received = 0
                dropBuffered()
            }
            peerConnection = header.connection
        }
        acknowledge(upTo: header.ack, now: now)
        if header.type == .ack, let message = try? ControlMessage.decode(type: .ack, payload: datagram.payload),
           case .ack(let bits) = message {
            for i in 0..<64 where bits & (1 << UInt64(i)) != 0 {
                let seq = header.ack &+ 2 &+ UInt32(i)
                if inFlight.removeValue(forKey: seq) != nil { stats.acked += 1 }
            }
        }
        guard header.type.isReliable else { return events }

        ackOwed = true
        let seq = header.sequence
        let ahead = seq &- received
        guard ahead >= 1, ahead <= options.receiveWindow else {
            stats.duplicates += 1
            return events
        }
        if ahead > 1 {
            // Kept as a compact copy: a slice would keep the whole received buffer alive.
            let kept = ControlDatagram(header: datagram.header, payload: ArraySlice(Array(datagram.payload)))
            if let old = outOfOrder.updateValue(kept, forKey: seq) {
                stats.duplicates += 1
                held -= Self.cost(old)
            }
            held += Self.cost(kept)
            return events
        }
        var next: ControlDatagram? = datagram
        while let d = next {
            received = d.header.sequence
            events += assemble(d)
            next = outOfOrder.removeValue(forKey: received &+ 1)
            if let n = next { held -= Self.cost(n) }
        }
        return events
    }

    mutating func assemble(_ d: ControlDatagram) -> [Event] {
        let h = d.header
        // Fragments of one message sit on consecutive sequences with indexes 0..<count; anything
        // else (a peer bug or an attack) discards the partial message rather than mixing bytes.
        if let first = partial.first, h.fragmentIndex != UInt16(partial.count) || h.fragmentCount != first.header.fragmentCount || h.type != first.header.type {
            for p in partial { held -= Self.cost(p) }
            partial = []
        }
        guard h.fragmentIndex == UInt16(partial.count) else { return [] }
        if h.fragmentCount > 1 {
            let kept = ControlDatagram(header: h, payload: ArraySlice(Array(d.payload)))
            partial.append(kept)
            held += Self.cost(kept)
        } else {
            partial.append(d)
        }
        guard partial.count == Int(h.fragmentCount) else { return [] }
        var payload: [UInt8] = []
        for fragment in partial { payload += fragment.payload }
        if h.fragmentCount > 1 { for p in partial { held -= Self.cost(p) } }
        partial = []
        do {
            let message = try ControlMessage.decode(type: h.type, payload: payload[...])
            stats.delivered += 1
            return [.delivered(message)]
        } catch {
            return [.malformed(error)]
        }
    }

    mutating func acknowledge(upTo ack: UInt32, now: ContinuousClock.Instant) {
        for seq in inFlight.keys where Int32(bitPattern: ack &- seq) >= 0 {
            guard let entry = inFlight.removeValue(forKey: seq) else { continue }
            stats.acked += 1
            if entry.retries == 0 { sampleRTT(now - entry.firstSent) }   // Karn: only unambiguous samples
        }
    }

    mutating func sampleRTT(_ sample: Duration) {
        if let s = srtt {
            let diff = s > sample ? s - sample : sample - s
            rttvar = rttvar * 3 / 4 + diff / 4
            srtt = s * 7 / 8 + sample / 8
        } else {
            srtt = sample
            rttvar = sample / 2
        }
        rto = min(options.maxRTO, max(options.minRTO, (srtt ?? sample) + rttvar * 4))
    }

    /// Datagrams to transmit now: new ones within the window, due retransmissions, and an ack if
    /// one is owed. Also reports a peer that stopped answering.
    package mutating func poll(now: ContinuousClock.Instant) -> (datagrams: [[UInt8]], events: [Event]) {
        var out: [[UInt8]] = []
        var events: [Event] = []
        for seq in inFlight.keys.sorted(by: { Int32(bitPattern: $0 &- $1) < 0 }) {
            guard var entry = inFlight[seq], entry.deadline <= now else { continue }
            if entry.retries >= options.maxRetries {
                events.append(.peerUnreachable)
                inFlight = [:]
                unsent = []
                break
            }
            entry.retries += 1
            let backoff = min(options.maxRTO, rto * (1 << min(entry.retries, 10)))
            entry.deadline = now + backoff
            entry.datagram.header.ack = received
            entry.datagram.header.connectionID = connectionID
            inFlight[seq] = entry
            out.append(entry.datagram.encode())
            stats.retransmitted += 1
        }
        while inFlight.count < options.window, !unsent.isEmpty {
            var d = unsent.removeFirst()
            d.header.ack = received
            d.header.connectionID = connectionID
            inFlight[d.header.sequence] = InFlight(datagram: d, firstSent: now, deadline: now + rto, retries: 0)
            out.append(d.encode())
            stats.sent += 1
        }
        if ackOwed {
            ackOwed = false
            var bits: UInt64 = 0
            for i in 0..<64 where outOfOrder[received &+ 2 &+ UInt32(i)] != nil { bits |= 1 << UInt64(i) }
            out.append(unreliable(.ack(selective: bits)))
        }
        return (out, events)
    }

    /// When ``poll(now:)`` next has something to do: `now` if something is ready to go, the
    /// earliest retransmission time otherwise, nil when idle.
    package func nextDeadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        if ackOwed || (!unsent.isEmpty && inFlight.count < options.window) { return now }
        return inFlight.values.map(\.deadline).min()
    }
}
