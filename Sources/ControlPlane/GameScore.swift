/// The button game's message to one player (Protocol.md §7.8): that player's own count and rank,
/// sent reliably as `data` on channel ``channel`` whenever one of them changes, and once more,
/// final, when the game ends.
///
/// ```
///  0      1       2       3       4       5       6       7       8       9      10      11
/// +------+-------+-------+-------+-------+-------+-------+-------+-------+------+-------+------+
/// | kind |      points (UInt32 BE)       |  rank (UInt16)| players (UInt16)| round |rounds|phase |
/// +------+-------+-------+-------+-------+-------+-------+-------+-------+------+-------+------+
/// ```
/// kind 1 = score. rank 1 is the best; tied players share a rank. phase 1 = playing, 2 = final
/// (the game is over and these are the results).
public struct GameScore: Hashable, Sendable {
    public static let channel: UInt8 = 1
    public static let kind: UInt8 = 1
    public static let size = 12

    public enum Phase: UInt8, Hashable, Sendable {
        case playing = 1
        case final = 2
    }

    public var points: UInt32
    public var rank: UInt16
    public var players: UInt16
    /// 1-based number of the round being played (the last one once final).
    public var round: UInt8
    public var rounds: UInt8
    public var phase: Phase

    public init(points: UInt32, rank: UInt16, players: UInt16, round: UInt8, rounds: UInt8, phase: Phase) {
        self.points = points; self.rank = rank; self.players = players
        self.round = round; self.rounds = rounds; self.phase = phase
    }

    /// The application bytes (after the channel byte of the `data` message).
    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.u8(Self.kind); w.u32(points); w.u16(rank); w.u16(players); w.u8(round); w.u8(rounds); w.u8(phase.rawValue)
        return w.bytes
    }

    /// As a `data` control message on the game's channel.
    public var message: ControlMessage { .data(channel: Self.channel, bytes: encode()) }

    /// Decodes the application bytes of a channel-1 message. Exactly 12 bytes, kind 1, a known phase.
    public static func decode(_ bytes: some Collection<UInt8>) throws(ControlMessageError) -> GameScore {
        let all = Array(bytes)
        var r = ByteReader(all[...])
        guard try r.u8() == kind else { throw ControlMessageError(.badField, at: 0, bytes: all) }
        let points = try r.u32(), rank = try r.u16(), players = try r.u16(), round = try r.u8(), rounds = try r.u8()
        guard let phase = Phase(rawValue: try r.u8()) else { throw ControlMessageError(.badField, at: 11, bytes: all) }
        try r.expectEnd()
        return GameScore(points: points, rank: rank, players: players, round: round, rounds: rounds, phase: phase)
    }
}
