/// The 20-byte header in front of every control message (Protocol.md §7).
///
/// ```
///  0       1       2       3       4       5       6       7       8       9
/// +-------+-------+-------+-------+-------+-------+-------+-------+-------+-------+
/// |  'A'  |  'R'  |version| type  |  connection id (UInt32 BE)    | sequence
/// +-------+-------+-------+-------+-------+-------+-------+-------+-------+-------+
///   (UInt32 BE)   |  ack (UInt32 BE)              | frag index    | frag count    |
/// +-------+-------+-------+-------+-------+-------+-------+-------+-------+-------+
///  10      11      12      13      14      15      16      17      18      19
/// then the payload: at most 1004 bytes, so a datagram is never over 1024 bytes.
/// ```
/// A state packet is exactly 8 bytes; a control datagram is at least 20 and starts with "AR",
/// so the two never collide and an 8-byte sender needs no control message at all.
public struct ControlHeader: Hashable, Sendable {
    public static let size = 20
    public static let magic: (UInt8, UInt8) = (0x41, 0x52)
    public static let version: UInt8 = 1
    /// GameKit's advice for unreliable links: keep datagrams under about 1 KB.
    public static let maxDatagram = 1024
    public static let maxPayload = maxDatagram - size

    public var type: ControlType
    /// Random per process, never 0: a new value from the same address means the peer restarted,
    /// so the receiving side resets its sequence state instead of taking new messages for duplicates.
    public var connection: UInt32
    /// 0 for unreliable messages; 1, 2, 3… for reliable datagrams of one connection.
    public var sequence: UInt32
    /// Cumulative acknowledgement: every reliable datagram up to this sequence has arrived.
    public var ack: UInt32
    public var fragmentIndex: UInt16
    public var fragmentCount: UInt16

    public init(type: ControlType, connection: UInt32, sequence: UInt32 = 0, ack: UInt32 = 0,
                fragmentIndex: UInt16 = 0, fragmentCount: UInt16 = 1) {
        self.type = type
        self.connection = connection
        self.sequence = sequence
        self.ack = ack
        self.fragmentIndex = fragmentIndex
        self.fragmentCount = fragmentCount
    }

    func write(into w: inout ByteWriter) {
        w.u8(Self.magic.0); w.u8(Self.magic.1); w.u8(Self.version); w.u8(type.rawValue)
        w.u32(connection); w.u32(sequence); w.u32(ack); w.u16(fragmentIndex); w.u16(fragmentCount)
    }

    /// True when `datagram` claims to be a control message (length and magic), before any checks.
    public static func looksLikeControl(_ datagram: some Collection<UInt8>) -> Bool {
        guard datagram.count >= size else { return false }
        var i = datagram.startIndex
        guard datagram[i] == magic.0 else { return false }
        i = datagram.index(after: i)
        return datagram[i] == magic.1
    }
}

/// Message types. Reliable ones travel through ``ReliableChannel`` (numbered, acknowledged,
/// retransmitted, in order); unreliable ones (sequence 0) may be lost and are never resent.
public enum ControlType: UInt8, Hashable, Sendable, CaseIterable {
    case hello = 0x01
    case accept = 0x02
    case deny = 0x03
    case bye = 0x04
    case ping = 0x05
    case pong = 0x06
    case data = 0x07
    case ack = 0x08
    case stopAll = 0x09
    case stopAllReply = 0x0A

    public var isReliable: Bool {
        switch self {
        case .hello, .accept, .deny, .bye, .data: true
        case .ping, .pong, .ack, .stopAll, .stopAllReply: false
        }
    }
}
