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
package struct GameScore: Hashable, Sendable {
    package static let channel: UInt8 = 1
    package static let kind: UInt8 = 1
    package static let size = 12

    package enum Phase: UInt8, Hashable, Sendable {
        case playing = 1
        case final = 2
    }

    package var points: UInt32
    package var rank: UInt16
    package var players: UInt16
    /// 1-based number of the round being played (the last one once final).
    package var round: UInt8
    package var rounds: UInt8
    package var phase: Phase

    package init(points: UInt32, rank: UInt16, players: UInt16, round: UInt8, rounds: UInt8, phase: Phase) {
        self.points = points; self.rank = rank; self.players = players
        self.round = round; self.rounds = rounds; self.phase = phase
    }

    /// The application bytes (after the channel byte of the `data` message).
    package func encode() -> [UInt8] {
        var w = ByteWriter()
        w.u8(Self.kind); w.u32(points); w.u16(rank); w.u16(players); w.u8(round); w.u8(rounds); w.u8(phase.rawValue)
        return w.bytes
    }

    /// As a `data` control message on the game's channel.
    package var message: ControlMessage { .data(channel: Self.channel, bytes: encode()) }

    /// Decodes the application bytes of a channel-1 message. Exactly 12 bytes, kind 1, a known phase.
    package static func decode(_ bytes: some Collection<UInt8>) throws(ControlMessageError) -> GameScore {
        let all = Array(bytes)
        var r = ByteReader(all[...])
        guard try r.u8() == kind else { throw ControlMessageError(.badField, at: 0, bytes: all) }
        let points = try r.u32(), rank = try r.u16(), players = try r.u16(), round = try r.u8(), rounds = try r.u8()
        guard let phase = Phase(rawValue: try r.u8()) else { throw ControlMessageError(.badField, at: 11, bytes: all) }
        try r.expectEnd()
        return GameScore(points: points, rank: rank, players: players, round: round, rounds: rounds, phase: phase)
    }
}
