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
/// port, the owner's states in the wake-up are seen first, and hands the board one
/// `setDesired` for the whole wake-up.
///
/// The only place the receiver reads its socket.
///
/// Slots are 1280 bytes, above the largest valid datagram (1024): a longer one arrives cut short
/// with its real length (`MSG_TRUNC`), and the engine counts it by that length.
struct DatagramDrain: ReceivedDatagrams {
    static let slotSize = 1280
    static let batchSize = 64
    let capacity: Int
    private(set) var count = 0
    /// Grown on demand: a quiet receiver keeps one batch (80 KiB), a flooded one at most
    /// capacity × 1280 bytes (1.3 MiB for 1024).
    private var batches: [DatagramBatch] = []
    /// The wall clock just after the last ``fill(from:)``, against which arrival stamps are aged.
    private(set) var wall = timespec()

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
        wall = WallClock.now()
        return count
    }

    /// Each datagram read, in order: `body(batch, slot)` reads it with `batch.source(slot)`,
    /// `bytes`, `length` and ``arrival(_:_:now:wall:)``. Trap: a call on `batches[k]` itself
    /// copied the batch (five array retains and releases) for every access, because the method
    /// is opaque to this module; here a batch is copied once per 64 datagrams.
    func forEach(_ body: (_ batch: DatagramBatch, _ slot: Int) -> Void) {
        var left = count
        for batch in batches {
            guard left > 0 else { return }
            for slot in 0..<min(Self.batchSize, left) { body(batch, slot) }
            left -= Self.batchSize
        }
    }

    func forEachDatagram(now: Tick, where include: (SocketAddress) -> Bool,
                         _ body: (SocketAddress, ArraySlice<UInt8>, Int, Tick?) -> Void) {
        let wall = wall
        forEach { batch, i in
            let source = batch.source(i)
            guard include(source) else { return }
            body(source, batch.bytes(i), batch.length(i), Self.arrival(batch, i, now: now, wall: wall))
        }
    }

    /// When datagram `slot` of `batch` arrived, on the continuous clock: `now` less the time it
    /// waited in the socket's queue (its kernel stamp against `wall`, both read just after
    /// ``fill(from:)``). Nil without a stamp; a wait over ``longestWait`` (a wall clock stepped
    /// forward) is taken as none, so a bad clock can only judge the controller by read time, as
    /// before stamps.
    static func arrival(_ batch: DatagramBatch, _ slot: Int, now: Tick, wall: timespec) -> Tick? {
        guard let age = batch.ageNanoseconds(slot, at: wall), age <= longestWait else { return nil }
        return now + -age
    }

    /// Longer than any receiver stall worth forgiving; a larger age is a clock step (ns: 5 s).
    static let longestWait: Int64 = 5_000_000_000
}
