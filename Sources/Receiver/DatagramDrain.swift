import SystemIO

/// One wake-up's datagrams: the socket is read until it has nothing more (EAGAIN) or
/// `capacity` datagrams were read, whichever comes first. The receive loop then handles the
/// owner's datagrams before anyone else's, so however many sources flood the port, the owner's
/// states in the batch are seen first (issue 19).
///
/// The only place the receiver reads its socket: turning this into `recvmmsg(2)` changes this
/// file alone.
///
/// Slots are 1280 bytes, above the largest valid datagram (1024): a longer one arrives cut short
/// with its real length (`MSG_TRUNC`), and the engine counts it by that length.
struct DatagramDrain {
    static let slotSize = 1280
    let capacity: Int
    private(set) var count = 0
    private var slots: [[UInt8]] = []
    private var lengths: [Int] = []
    private var sources: [SocketAddress?] = []

    init(capacity: Int) {
        precondition(capacity >= 1)
        self.capacity = capacity
    }

    /// Reads what is queued (at most `capacity`); returns how many datagrams were read.
    @discardableResult
    mutating func fill(from socket: UDPSocket) throws(SystemError) -> Int {
        count = 0
        while count < capacity {
            if count == slots.count {
                // Grown on demand: a quiet receiver keeps a few KiB, a flooded one at most
                // capacity × 1280 bytes (1.3 MiB for 1024).
                slots.append([UInt8](repeating: 0, count: Self.slotSize))
                lengths.append(0)
                sources.append(nil)
            }
            guard let (length, from) = try socket.receive(into: &slots[count]) else { break }
            lengths[count] = length
            sources[count] = from
            count += 1
        }
        return count
    }

    func source(_ i: Int) -> SocketAddress { sources[i]! }   // set for every i < count
    /// The datagram's real length (may exceed the bytes kept, see ``bytes(_:)``).
    func length(_ i: Int) -> Int { lengths[i] }
    /// The bytes kept of datagram `i` (all of it unless it was longer than a slot).
    func bytes(_ i: Int) -> ArraySlice<UInt8> { slots[i][..<min(lengths[i], Self.slotSize)] }
}
