/// What one open dashboard has been sent, so that each push carries only what changed since the
/// one before, and nothing is pushed when nothing changed (30 robots, four looks a second: most
/// rows are the same from one look to the next).
///
/// A push is `{"t":"rows","now":N,"order":[ID…],"rows":[ROW…],"dropped":N,"missing":[…],"game":{…},"robotGame":{…}}`:
/// `now` always (ms since the dashboard connected: the timeline of every row's `heard` and
/// `sentAt`, from which the page shows ages that move between pushes); `order` (every row's id, in
/// the order of the tiles) when the set or the order of the rows changed; `rows` the rows whose
/// text changed (every row in the first push), a row whose id left `order` being gone; `dropped`,
/// `missing` (only with a roster), `game` and `robotGame` when they changed. The first push has them all.
struct TeacherPush {
    /// Where the timeline starts.
    let epoch: ContinuousClock.Instant
    /// Each row's text as last sent, by id.
    private var sent: [String: String] = [:]
    private var order: [String]?
    private var dropped: Int?
    private var missing: [String]?
    private var game: TeacherGame.Board?
    private var robotGame: TeacherRobotGame.Board?

    init(epoch: ContinuousClock.Instant) {
        self.epoch = epoch
    }

    /// The push for the rows as they are `now`, or nil when it would say nothing new.
    mutating func next(_ rows: [TeacherLink.Row], now: ContinuousClock.Instant, roster: Roster?, missing: [String],
                       game: TeacherGame.Board?, dropped: Int, watchingSince: ContinuousClock.Instant?,
                       robotGame: TeacherRobotGame.Board? = nil) -> String? {
        let first = order == nil
        let rows = TeacherRows.ordered(rows, roster: roster)
        let ids = rows.map(\.id)
        let reordered = ids != order
        if reordered {
            order = ids
            let kept = Set(ids)
            sent = sent.filter { kept.contains($0.key) }
        }
        var changed: [String] = []
        for row in rows {
            let text = TeacherRows.object(row, now: now, epoch: epoch, roster: roster, watchingSince: watchingSince)
            if sent[row.id] != text {
                sent[row.id] = text
                changed.append(text)
            }
        }
        let newDropped = first || dropped != self.dropped
        let newMissing = roster != nil && (first || missing != self.missing)
        let newGame = game != nil && (first || game != self.game)
        let newRobotGame = robotGame != nil && (first || robotGame != self.robotGame)
        guard reordered || !changed.isEmpty || newDropped || newMissing || newGame || newRobotGame else { return nil }
        self.dropped = dropped
        self.missing = missing
        self.game = game
        self.robotGame = robotGame
        var message = TeacherRows.Fields()
        message.string("t", "rows")
        message.number("now", TeacherRows.millis(now, since: epoch))
        if reordered { message.strings("order", ids) }
        message.raw("rows", "[" + changed.joined(separator: ",") + "]")
        if newDropped { message.number("dropped", dropped) }
        if newMissing { message.strings("missing", missing) }
        if newGame, let game { message.raw("game", TeacherRows.game(game)) }
        if newRobotGame, let robotGame { message.raw("robotGame", TeacherRows.robotGame(robotGame)) }
        return message.closed
    }
}
