import ControlPlane
import ControlWire
import RemoteWire
import TestSupport
import Testing

/// A deterministic lossy network between two channels: drops a fraction of datagrams, delays
/// each by a random amount (so they reorder), all on a manual clock with a seeded generator.
struct LossyLink {
    struct Flight { let at: ContinuousClock.Instant; let to: Int; let bytes: [UInt8] }
    var rng: SplitMix
    let loss: Double
    let maxDelay: Duration
    var inTransit: [Flight] = []
    var dropped = 0

    mutating func send(_ bytes: [UInt8], to: Int, now: ContinuousClock.Instant) {
        if Double(rng.next() % 10_000) / 10_000 < loss { dropped += 1; return }
        let delay = Duration.microseconds(Int64(rng.next() % UInt64(maxDelay.components.seconds * 1_000_000 + maxDelay.components.attoseconds / 1_000_000_000_000 + 1)))
        inTransit.append(Flight(at: now + delay, to: to, bytes: bytes))
    }

    mutating func arrivals(until now: ContinuousClock.Instant) -> [Flight] {
        let due = inTransit.filter { $0.at <= now }.sorted { $0.at < $1.at }
        inTransit.removeAll { $0.at <= now }
        return due
    }
}


@Suite struct ReliableChannelTests {
    /// Runs two channels over `link` until both directions are delivered or `limit` passes.
    static func exchange(_ messagesA: [ControlMessage], _ messagesB: [ControlMessage], link: inout LossyLink,
                         limit: Duration = .seconds(120)) throws -> (atB: [ControlMessage], atA: [ControlMessage], a: ReliableChannel, b: ReliableChannel) {
        var a = ReliableChannel(connection: 0xA)
        var b = ReliableChannel(connection: 0xB)
        for m in messagesA { try a.send(m) }
        for m in messagesB { try b.send(m) }
        let start = ContinuousClock.now
        var now = start
        var atA: [ControlMessage] = [], atB: [ControlMessage] = []
        while now - start < limit && (atB.count < messagesA.count || atA.count < messagesB.count || a.backlog + b.backlog > 0) {
            let (outA, evA) = a.poll(now: now)
            let (outB, evB) = b.poll(now: now)
            #expect(!evA.contains(.peerUnreachable) && !evB.contains(.peerUnreachable))
            for d in outA { link.send(d, to: 1, now: now) }
            for d in outB { link.send(d, to: 0, now: now) }
            now += .milliseconds(5)
            for f in link.arrivals(until: now) {
                let d = try ControlDatagram.decode(f.bytes)
                if f.to == 1 {
                    for case .delivered(let m) in b.receive(d, now: now) { atB.append(m) }
                } else {
                    for case .delivered(let m) in a.receive(d, now: now) { atA.append(m) }
                }
            }
        }
        return (atB, atA, a, b)
    }

    @Test(arguments: [UInt64(1), 2, 3, 42, 1234])
    func everyMessageArrivesOnceInOrderUnder30PercentLossAndReordering(seed: UInt64) throws {
        var rng = SplitMix(seed: seed)
        var messages: [ControlMessage] = []
        for i in 0..<150 {
            let size = Int(rng.next() % 3000)
            messages.append(.data(channel: UInt8(i % 4), bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }))
        }
        let replies = (0..<40).map { ControlMessage.data(channel: 9, bytes: Array("reply \($0)".utf8)) }
        var link = LossyLink(rng: SplitMix(seed: seed &* 77), loss: 0.30, maxDelay: .milliseconds(60))
        let r = try Self.exchange(messages, replies, link: &link)
        #expect(r.atB == messages)
        #expect(r.atA == replies)
        #expect(link.dropped > 50, "the link must actually have lost datagrams")
        #expect(r.a.stats.retransmitted > 0)
        #expect(r.b.stats.delivered == messages.count)
    }

    @Test func a64KiBMessageSurvivesLossAndIsReassembled() throws {
        let big = (0..<(64 * 1024 - 1)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        var link = LossyLink(rng: SplitMix(seed: 99), loss: 0.30, maxDelay: .milliseconds(40))
        let r = try Self.exchange([.data(channel: 1, bytes: big), .bye], [], link: &link)
        #expect(r.atB == [.data(channel: 1, bytes: big), .bye])
        #expect(r.a.stats.sent >= 66, "64 KiB must go as about 66 datagrams of at most 1 KB")
    }

    @Test func everyDatagramIsAtMostOneKilobyte() throws {
        var a = ReliableChannel(connection: 1)
        try a.send(.data(channel: 0, bytes: [UInt8](repeating: 0xEE, count: 30_000)))
        let (out, _) = a.poll(now: .now)
        #expect(!out.isEmpty)
        #expect(out.allSatisfy { $0.count <= 1024 })
    }

    @Test func tooLargeMessageIsRefused() {
        var a = ReliableChannel(connection: 1)
        #expect(throws: ControlMessageError.self) { try a.send(.data(channel: 0, bytes: [UInt8](repeating: 0, count: 64 * 1024 + 1))) }
    }

    @Test func duplicatesAreDroppedAndCounted() throws {
        var a = ReliableChannel(connection: 1), b = ReliableChannel(connection: 2)
        try a.send(.hello(.init(peerID: 7, displayName: "ロボ 1")))
        let now = ContinuousClock.now
        let (out, _) = a.poll(now: now)
        let datagram = try ControlDatagram.decode(out[0])
        #expect(b.receive(datagram, now: now) == [.delivered(.hello(.init(peerID: 7, displayName: "ロボ 1")))])
        #expect(b.receive(datagram, now: now) == [])
        #expect(b.stats.duplicates == 1)
    }

    @Test func silentPeerIsReportedUnreachableAfterRetries() throws {
        var a = ReliableChannel(connection: 1)
        try a.send(.bye)
        var now = ContinuousClock.now
        var unreachable = false
        for _ in 0..<10_000 where !unreachable {
            unreachable = a.poll(now: now).events.contains(.peerUnreachable)
            now += .milliseconds(50)
        }
        #expect(unreachable)
        #expect(a.stats.retransmitted == a.options.maxRetries)
    }

    @Test func restartedPeerResetsSequenceState() throws {
        var b = ReliableChannel(connection: 2)
        let now = ContinuousClock.now
        for connection in [UInt32(10), 11] {
            var a = ReliableChannel(connection: connection)
            try a.send(.bye)
            let d = try ControlDatagram.decode(a.poll(now: now).datagrams[0])
            let events = b.receive(d, now: now)
            #expect(events.contains(.delivered(.bye)))
            #expect(events.contains(.peerRestarted) == (connection == 11))
        }
    }

    @Test func roundTripIsMeasuredFromUnretransmittedDatagrams() throws {
        var a = ReliableChannel(connection: 1), b = ReliableChannel(connection: 2)
        try a.send(.bye)
        let t0 = ContinuousClock.now
        let d = try ControlDatagram.decode(a.poll(now: t0).datagrams[0])
        _ = b.receive(d, now: t0 + .milliseconds(10))
        let ack = try ControlDatagram.decode(b.poll(now: t0 + .milliseconds(10)).datagrams[0])
        _ = a.receive(ack, now: t0 + .milliseconds(20))
        #expect(a.roundTrip == .milliseconds(20))
        #expect(a.backlog == 0)
    }
}
