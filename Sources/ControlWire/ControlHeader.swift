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
///
/// Version 2 is the same 20 bytes with version 2, then the **connection id** the receiver chose
/// when it accepted the controller:
/// ```
///  20      21      22      23      24      25      26      27
/// +-------+-------+-------+-------+-------+-------+-------+-------+
/// |            connection id (UInt64 BE, never 0)                 |
/// +-------+-------+-------+-------+-------+-------+-------+-------+
/// ```
/// Every control datagram between a controller and a receiver after the `accept` carries it, both
/// ways; a hello, a stop-all, its reply and a one-shot deny are version 1 (``connectionID`` 0).
package struct ControlHeader: Hashable, Sendable {
    /// The version-1 header's size (the smallest control datagram).
    package static let size = 20
    /// The version-2 header's size.
    package static let extendedSize = 28
    package static let magic: (UInt8, UInt8) = (0x41, 0x52)
    package static let version: UInt8 = 1
    package static let extendedVersion: UInt8 = 2
    /// GameKit's advice for unreliable links: keep datagrams under about 1 KB.
    package static let maxDatagram = 1024
    /// The most payload bytes a sender puts in one datagram (one fragment): room for a version-2
    /// header and, around the whole datagram, the authenticated envelope (a second version-2
    /// header, an 8-byte counter and a 16-byte tag): 1024 − 28 − 28 − 8 − 16 = 944.
    package static let maxPayload = maxDatagram - 2 * extendedSize - 8 - 16
    /// The largest message the reliable channel carries, and the most fragments a header may name;
    /// a decoder refuses a larger fragment count before any reassembly.
    package static let maxMessage = 64 * 1024
    package static let maxFragments: UInt16 = UInt16((maxMessage + maxPayload - 1) / maxPayload) + 1

    package var type: ControlType
    /// Random per process, never 0: a new value from the same address means the peer restarted,
    /// so the receiving side resets its sequence state instead of taking new messages for duplicates.
    package var connection: UInt32
    /// 0 for unreliable messages; 1, 2, 3… for reliable datagrams of one connection.
    package var sequence: UInt32
    /// Cumulative acknowledgement: every reliable datagram up to this sequence has arrived.
    package var ack: UInt32
    package var fragmentIndex: UInt16
    package var fragmentCount: UInt16
    /// The receiver-chosen connection id (version 2), or 0: a version-1 header without one.
    package var connectionID: UInt64

    package init(type: ControlType, connection: UInt32, sequence: UInt32 = 0, ack: UInt32 = 0,
                fragmentIndex: UInt16 = 0, fragmentCount: UInt16 = 1, connectionID: UInt64 = 0) {
        self.type = type
        self.connection = connection
        self.sequence = sequence
        self.ack = ack
        self.fragmentIndex = fragmentIndex
        self.fragmentCount = fragmentCount
        self.connectionID = connectionID
    }

    /// 20 bytes for version 1, 28 with a connection id.
    package var encodedSize: Int { connectionID == 0 ? Self.size : Self.extendedSize }

    func write(into w: inout ByteWriter) {
        w.u8(Self.magic.0); w.u8(Self.magic.1); w.u8(connectionID == 0 ? Self.version : Self.extendedVersion); w.u8(type.rawValue)
        w.u32(connection); w.u32(sequence); w.u32(ack); w.u16(fragmentIndex); w.u16(fragmentCount)
        if connectionID != 0 { w.u64(connectionID) }
    }

    /// The encoded header alone (what the authenticated envelope authenticates).
    package var bytes: [UInt8] {
        var w = ByteWriter()
        write(into: &w)
        return w.bytes
    }

    /// True when `datagram` claims to be a control message (length and magic), before any checks.
    package static func looksLikeControl(_ datagram: some Collection<UInt8>) -> Bool {
        guard datagram.count >= size else { return false }
        var i = datagram.startIndex
        guard datagram[i] == magic.0 else { return false }
        i = datagram.index(after: i)
        return datagram[i] == magic.1
    }

    /// The connection id of a version-2 control datagram we built (bytes 20…27), nil otherwise.
    package static func connectionID(in datagram: [UInt8]) -> UInt64? {
        guard datagram.count >= extendedSize, looksLikeControl(datagram), datagram[2] == extendedVersion else { return nil }
        return datagram[20..<28].reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// Message types. Reliable ones travel through ``ReliableChannel`` (numbered, acknowledged,
/// retransmitted, in order); unreliable ones (sequence 0) may be lost and are never resent.
package enum ControlType: UInt8, Hashable, Sendable, CaseIterable {
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
    /// Receiver → controller: what the robot is doing for it (Protocol.md §7.9).
    case robotState = 0x0B
    /// The teacher's dashboard (Protocol.md §7.10–§7.12): a signed command, its reply, and the
    /// reports a watched receiver sends.
    case teacher = 0x0C
    case teacherReply = 0x0D
    case watchReport = 0x0E
    /// Receiver → controller under `--accept secret`: prove you know the robot's secret.
    case challenge = 0x10
    /// Controller → receiver: the proof (an HMAC over both sides' nonces).
    case proof = 0x11
    /// The authenticated envelope: a whole datagram (state packet or control datagram) sealed
    /// with the connection's key. Not a message: opened by ``SealedEnvelope`` before anything else.
    case sealed = 0x12
    /// Application data sent once, best effort: one datagram, never acknowledged, never
    /// retransmitted, maybe reordered (Protocol.md §7.13).
    case datagram = 0x13
    /// Receiver → controller: what the robot senses (Protocol.md §7.9, RobotSensors.swift).
    case robotSensors = 0x14

    package var isReliable: Bool {
        switch self {
        case .hello, .accept, .deny, .bye, .data, .challenge, .proof: true
        case .ping, .pong, .ack, .stopAll, .stopAllReply, .sealed, .robotState, .robotSensors, .teacher, .teacherReply,
             .watchReport, .datagram: false
        }
    }
}
