/// The button game (seed 004's closing example): every player who joins counts a point per
/// press of A (a press, not a hold); the scoreboard ranks players by points, ties share a rank.
public struct GameRound: Sendable {
    public struct Player: Hashable, Sendable {
        public let id: Int
        public var name: String
        public var points: Int
        public var held: Bool
        public let joined: ContinuousClock.Instant
    }

    public static let maxPlayers = 64
    public private(set) var players: [Player] = []

    public init() {}

    public enum JoinResult: Hashable, Sendable { case joined(Int), existing(Int), full }

    /// Adds a player; a name already taken gets " #2", " #3"… (GameKit display names need not be unique).
    public mutating func join(name: String, now: ContinuousClock.Instant) -> JoinResult {
        guard players.count < Self.maxPlayers else { return .full }
        let id = players.count
        players.append(Player(id: id, name: uniqueName(name), points: 0, held: false, joined: now))
        return .joined(id)
    }

    func uniqueName(_ name: String) -> String {
        let base = name.isEmpty ? "player" : name
        var candidate = base
        var n = 2
        while players.contains(where: { $0.name == candidate }) {
            candidate = "\(base) #\(n)"
            n += 1
        }
        return candidate
    }

    /// Feeds a player's A button state; returns true when this was a new press (a point).
    @discardableResult
    public mutating func button(_ pressed: Bool, player id: Int) -> Bool {
        guard players.indices.contains(id) else { return false }
        defer { players[id].held = pressed }
        guard pressed, !players[id].held else { return false }
        players[id].points += 1
        return true
    }

    /// Players ordered by points (then by join order), with their rank (1 = best; ties share).
    public var standings: [(rank: Int, player: Player)] {
        let sorted = players.sorted { $0.points != $1.points ? $0.points > $1.points : $0.id < $1.id }
        var out: [(Int, Player)] = []
        for (i, p) in sorted.enumerated() {
            let rank = i > 0 && sorted[i - 1].points == p.points ? out[i - 1].0 : i + 1
            out.append((rank, p))
        }
        return out
    }

    public func rank(of id: Int) -> Int? { standings.first { $0.player.id == id }?.rank }

    /// RFC 4180 CSV: `rank,name,points`, names quoted when they need it.
    public func csv() -> String {
        var text = "rank,name,points\r\n"
        for (rank, p) in standings { text += "\(rank),\(Self.csvField(p.name)),\(p.points)\r\n" }
        return text
    }

    static func csvField(_ s: String) -> String {
        s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
    }

    /// `{"players":[{"rank":1,"name":"Ann","points":12},…]}`.
    public func json() -> String {
        let rows = standings.map { "{\"rank\":\($0.rank),\"name\":\(Self.jsonString($0.player.name)),\"points\":\($0.player.points)}" }
        return "{\"players\":[" + rows.joined(separator: ",") + "]}\n"
    }

    static func jsonString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
