import Console
import RemoteWire

/// The button game (seed 004's closing example): every player who joins counts a point per
/// press of A (a press, not a hold); the scoreboard ranks players by points, ties share a rank.
///
/// A game may have several rounds (``nextRound()``): points are kept per round, ``Player/points``
/// is the total, and the standings rank the totals.
package struct GameRound: Sendable {
    package struct Player: Hashable, Sendable {
        package let id: Int
        package var name: String
        /// Total over every round.
        package var points: Int
        package var held: Bool
        package let joined: ContinuousClock.Instant
        /// Points per round, index 0 = round 1 (rounds before the player joined hold 0).
        package var roundPoints: [Int] = [0]
    }

    package static let maxPlayers = 64
    package private(set) var players: [Player] = []
    /// The round being played, 1-based.
    package private(set) var round = 1

    package init() {}

    package enum JoinResult: Hashable, Sendable { case joined(Int), existing(Int), full }

    /// Adds a player; a name already taken gets " #2", " #3"… (GameKit display names need not be unique).
    package mutating func join(name: String, now: ContinuousClock.Instant) -> JoinResult {
        guard players.count < Self.maxPlayers else { return .full }
        let id = players.count
        players.append(Player(id: id, name: uniqueName(name), points: 0, held: false, joined: now,
                              roundPoints: [Int](repeating: 0, count: round)))
        return .joined(id)
    }

    /// Renames a player (a plain sender named by its address that later said hello with a
    /// display name); the new name is made unique like a joining one. Returns the name in use.
    @discardableResult
    package mutating func rename(player id: Int, to name: String) -> String? {
        guard players.indices.contains(id) else { return nil }
        if players[id].name == name { return name }
        players[id].name = uniqueName(name, except: id)
        return players[id].name
    }

    /// Starts the next round: points count for it from now on; buttons held across the change
    /// do not count again.
    package mutating func nextRound() {
        round += 1
        for i in players.indices { players[i].roundPoints.append(0) }
    }

    func uniqueName(_ name: String, except: Int? = nil) -> String {
        let base = name.isEmpty ? "player" : name
        var candidate = base
        var n = 2
        while players.contains(where: { $0.name == candidate && $0.id != except }) {
            candidate = "\(base) #\(n)"
            n += 1
        }
        return candidate
    }

    /// Feeds a player's A button state; returns true when this was a new press (a point).
    @discardableResult
    package mutating func button(_ pressed: Bool, player id: Int) -> Bool {
        guard players.indices.contains(id) else { return false }
        defer { players[id].held = pressed }
        guard pressed, !players[id].held else { return false }
        players[id].points += 1
        players[id].roundPoints[players[id].roundPoints.count - 1] += 1
        return true
    }

    /// Players ordered by points (then by join order), with their rank (1 = best; ties share).
    package var standings: [(rank: Int, player: Player)] {
        let sorted = players.sorted { $0.points != $1.points ? $0.points > $1.points : $0.id < $1.id }
        var out: [(Int, Player)] = []
        for (i, p) in sorted.enumerated() {
            let rank = i > 0 && sorted[i - 1].points == p.points ? out[i - 1].0 : i + 1
            out.append((rank, p))
        }
        return out
    }

    package func rank(of id: Int) -> Int? { standings.first { $0.player.id == id }?.rank }

    /// CSV (``CSVText``: RFC 4180, formula cells neutralised): `rank,name,points`. After more
    /// than one round, one more column per round: `round1,round2,…`.
    package func csv() -> String {
        let perRound = round > 1
        var text = CSVText.row(["rank", "name", "points"] + (perRound ? (1...round).map { "round\($0)" } : []))
        for (rank, p) in standings {
            text += CSVText.row(["\(rank)", p.name, "\(p.points)"] + (perRound ? p.roundPoints.map { "\($0)" } : []))
        }
        return text
    }

    /// `{"players":[{"rank":1,"name":"Ann","points":12},…]}`; after more than one round each
    /// player also has `"rounds":[5,7]`. `header` fields (string values) come first, e.g.
    /// `{"session":"class-3b","players":[…]}`.
    package func json(header: KeyValuePairs<String, String> = [:]) -> String {
        let perRound = round > 1
        let rows = standings.map { row in
            "{\"rank\":\(row.rank),\"name\":\(ConsoleLogHandler.quote(row.player.name)),\"points\":\(row.player.points)"
                + (perRound ? ",\"rounds\":[" + row.player.roundPoints.map(String.init).joined(separator: ",") + "]" : "") + "}"
        }
        let fields = header.map { "\(ConsoleLogHandler.quote($0.key)):\(ConsoleLogHandler.quote($0.value))," }.joined()
        return "{" + fields + "\"players\":[" + rows.joined(separator: ",") + "]}\n"
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
