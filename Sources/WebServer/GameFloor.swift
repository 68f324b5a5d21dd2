import Synchronization

/// One game at a time on the dashboard: the button game and the robots' round share it. A game
/// takes the floor at its Start and gives it back once its round is over; a Start of the other
/// game meanwhile is refused (the dashboard says which game plays), never queued.
final class GameFloor: Sendable {
    enum Game: Sendable, Equatable {
        case button, robots

        /// As the refusal names it.
        var name: String { self == .button ? "the button game" : "the robots' round" }
    }

    private let holder = Mutex<Game?>(nil)

    /// Takes the floor for `game` (it may hold it already); nil when taken, else the game that
    /// holds it.
    func take(_ game: Game) -> Game? {
        holder.withLock { h in
            if let other = h, other != game { return other }
            h = game
            return nil
        }
    }

    /// Gives the floor back if `game` holds it.
    func release(_ game: Game) {
        holder.withLock { if $0 == game { $0 = nil } }
    }

    var current: Game? { holder.withLock { $0 } }

    /// What the dashboard shows when `game`'s Start is refused because `other` plays.
    static func refusal(_ game: Game, busy other: Game) -> String {
        "not started: \(other.name) is playing; end it first (one game at a time)"
    }
}
