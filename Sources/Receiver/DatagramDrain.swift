#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// One wake-up's datagrams: the socket is read with `recvmmsg(2)`, 64 datagrams a call
/// (``DatagramBatch``, buffers allocated once and reused), until a call comes back short (the
/// queue was empty) or `capacity` datagrams were read, whichever comes first. The receive loop
/// then handles the owner's datagrams before anyone else's, so however many sources flood the
/// port, the owner's states in the wake-up are seen first (issue 19), and hands the board one
/// `setDesired` for the whole wake-up (issue 16).
///
/// The only place the receiver reads its socket.
///
/// Slots are 1280 bytes, above the largest valid datagram (1024): a longer one arrives cut short
/// with its real length (`MSG_TRUNC`), and the engine counts it by that length.
struct DatagramDrain {
    static let slotSize = 1280
    static let batchSize = 64
    let capacity: Int
    private(set) var count = 0
    /// Grown on demand: a quiet receiver keeps one batch (80 KiB), a flooded one at most
    /// capacity × 1280 bytes (1.3 MiB for 1024).
    private var batches: [DatagramBatch] = []

    init(capacity: Int) {
        precondition(capacity >= 1)
        self.capacity = capacity
    }

    /// Reads what is queued (at most `capacity`); returns how many datagrams were read. Every
    /// batch but the last is full, so datagram `i` is slot `i % 64` of batch `i / 64`.
    @discardableResult
    mutating func fill(from socket: UDPSocket) throws(SystemError) -> Int {
        count = 0
        var k = 0
        while count < capacity {
            if k == batches.count { batches.append(DatagramBatch(capacity: Self.batchSize, slotSize: Self.slotSize)) }
            let asked = min(Self.batchSize, capacity - count)
            let n = try socket.receive(into: &batches[k], maximum: asked)
            count += n
            k += 1
            if n < asked { break }
        }
        return count
    }

    /// When datagram `i` arrived, on the continuous clock: `now` less the time it waited in the
    /// socket's queue (its kernel stamp against `wall`, both read just after ``fill(from:)``).
    /// Nil without a stamp; a wait over ``longestWait`` (a wall clock stepped forward) is taken
    /// as none, so a bad clock can only judge the controller by read time, as before stamps.
    func arrival(_ i: Int, now: ContinuousClock.Instant, wall: timespec) -> ContinuousClock.Instant? {
        guard let age = slot(i, { $0.age($1, at: wall) }), age <= Self.longestWait else { return nil }
        return now - age
    }

    /// Longer than any receiver stall worth forgiving; a larger age is a clock step.
    static let longestWait: Duration = .seconds(5)

    func source(_ i: Int) -> SocketAddress { slot(i) { $0.source($1) } }
    /// The datagram's real length (may exceed the bytes kept, see ``bytes(_:)``).
    func length(_ i: Int) -> Int { slot(i) { $0.length($1) } }
    /// The bytes kept of datagram `i` (all of it unless it was longer than a slot).
    func bytes(_ i: Int) -> ArraySlice<UInt8> { slot(i) { $0.bytes($1) } }

    /// Reads datagram `i` in place. Trap: `batches[k].source(j)` copied the whole batch (five
    /// array retains and releases) for each call; through the buffer pointer it is borrowed.
    @inline(__always)
    private func slot<R>(_ i: Int, _ read: (DatagramBatch, Int) -> R) -> R {
        batches.withUnsafeBufferPointer { read($0[i / Self.batchSize], i % Self.batchSize) }
    }
}
