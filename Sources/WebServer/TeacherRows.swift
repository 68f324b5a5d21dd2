import ControlWire
import RemoteWire
import SystemIO

/// The rows as the dashboard reads them: JSON text written field by field (the keys are fixed,
/// every string goes through ``JSONText/quote(_:)``), not through Foundation's
/// `JSONSerialization`, whose `[String: Any]` boxing and locale-aware key sorting were most of
/// the web server's work with a dashboard open. What one dashboard is sent, push by push, is
/// ``TeacherPush``.
///
/// Each row: `id`, `label`, `heard` (when it was last heard, ms on the push's timeline: see
/// ``TeacherPush``), `offline` (silent for ``offlineAfter`` or never heard), `gone` (no longer
/// listed by DNS-SD, kept until back or dismissed), `keyless` (answers unsigned: only Stop
/// reaches it, as a stop-all for the whole session sent to its address), `sent` and `sentAt`
/// (the last stop or release sent to it, and when, on the same timeline), and the robot's own
/// figures once a report came (with `sensors`, `{"sensor1":…,"switch":…,"temperature":…,
/// "humidity":…}`, when the robot reads them).
enum TeacherRows {
    /// A robot silent this long (or never heard) is OFFLINE: four reports missed (§7.12).
    static let offlineAfter: Duration = .seconds(2)

    /// The order of the tiles: the roster's robots in the roster's order, then the others in
    /// natural order of their names ("robot 2" before "robot 10").
    static func ordered(_ rows: [TeacherLink.Row], roster: Roster?) -> [TeacherLink.Row] {
        let place = roster?.robotOrder ?? [:]
        // By what the page shows: the signed name, else the address (an unproven robot's own
        // words order nothing either).
        let keyed = rows.map { row in
            let shown = row.name ?? row.address ?? row.label
            return (row: row, name: NaturalOrder.Key(shown), place: place[shown.lowercased()] ?? Int.max)
        }
        return keyed.sorted { a, b in
            if a.place != b.place { return a.place < b.place }
            if a.name != b.name { return a.name < b.name }
            return a.row.id < b.row.id
        }.map(\.row)
    }

    /// Milliseconds from `epoch` to `t` (negative before it).
    static func millis(_ t: ContinuousClock.Instant, since epoch: ContinuousClock.Instant) -> Int {
        let d = (t - epoch).components
        return Int(d.seconds) * 1000 + Int(d.attoseconds / 1_000_000_000_000_000)
    }

    /// The silence a row's OFFLINE counts from: its last report, but not the silence before the
    /// robots were asked (nil: never heard nor asked, OFFLINE already).
    static func offlineSince(_ row: TeacherLink.Row, watchingSince: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        switch (row.heard, watchingSince) {
        case let (h?, w?): max(h, w)
        case let (h, w): h ?? w
        }
    }

    /// When the next of `rows` turns OFFLINE by silence alone (nil: none will): a dashboard looks
    /// then, so a robot that stopped answering is flagged on time, not at the next periodic look.
    static func nextOffline(_ rows: [TeacherLink.Row], now: ContinuousClock.Instant,
                            watchingSince: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        rows.compactMap { row -> ContinuousClock.Instant? in
            guard let since = offlineSince(row, watchingSince: watchingSince) else { return nil }
            // `offline` is "silent for more than offlineAfter": a millisecond past it.
            let at = since + offlineAfter + .milliseconds(1)
            return at > now ? at : nil
        }.min()
    }

    /// One row as a JSON object. Nothing in it moves by itself: times are instants on the
    /// timeline that starts at `epoch`, not ages, so an unchanged row gives the same text.
    static func object(_ row: TeacherLink.Row, now: ContinuousClock.Instant, epoch: ContinuousClock.Instant, roster: Roster?,
                       watchingSince: ContinuousClock.Instant?) -> String {
        var o = Fields()
        o.string("id", row.id)
        o.string("label", row.label)
        if let heard = row.heard { o.number("heard", millis(heard, since: epoch)) }
        o.bool("offline", offlineSince(row, watchingSince: watchingSince).map { now - $0 > offlineAfter } ?? true)
        if row.gone { o.bool("gone", true) }
        if row.keyless { o.bool("keyless", true) }
        if let sent = row.sent {
            o.string("sent", sent.action)
            o.number("sentAt", millis(sent.at, since: epoch))
        }
        if let refusal = row.refusal { o.string("refusal", refusal) }
        if let stop = row.stop { o.string("stop", stop) }
        if let name = row.name { o.string("name", name) }
        if let roster {
            var students = roster.students(of: row.name ?? row.label)
            if let r = row.report {
                let signed = roster.students(of: r.name.text)
                if !signed.isEmpty { students = signed }
            }
            if !students.isEmpty { o.strings("students", students) }
        }
        if let address = row.address { o.string("address", address) }
        if let unverified = row.unverified { o.string("unverified", unverified) }
        if let off = row.off { o.string("off", off) }
        guard let r = row.report else { return o.closed }
        o.string("robotId", RobotID(value: r.robotID)?.text ?? String(r.robotID, radix: 16))
        o.string("driver", r.driver)
        o.string("state", r.state.name)
        if case .failsafe(let cause) = r.state { o.string("cause", cause.name) }
        if case .boardMissing(let why) = r.state { o.string("text", why) }
        if r.rttMeanMillis != WatchReport.unknown {
            o.number("rttMean", Int(r.rttMeanMillis))
            o.number("rttMax", Int(r.rttMaxMillis))
        }
        if r.lossPerMille != WatchReport.unknown {
            // Per mille as a percentage with one decimal, exactly ("0.3", "12").
            let tenths = Int(r.lossPerMille)
            o.raw("loss", tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)")
        }
        o.number("sps", Int(r.statesPerSecond))
        o.number("failsafes", Int(r.failsafes))
        o.string("board", r.board)
        o.string("transport", r.transport)
        o.string("version", r.version)
        o.number("uptime", Int(r.uptimeSeconds))
        o.string("locked", r.lockedTo)
        o.bool("identifying", r.flags & WatchReport.identifyingFlag != 0)
        // Only from a report whose MAC verified (the block is under it): raw board values.
        if let b = r.sensors { o.raw("sensors", RobotSensors(sample: 0, block: b).json) }
        return o.closed
    }

    /// The button game as `{"playing":…,"port":…,"problem":…,"round":…,"scores":[{"name","points","rank"}…]}`.
    static func game(_ game: TeacherGame.Board) -> String {
        var g = Fields()
        g.bool("playing", game.playing)
        if let port = game.port { g.number("port", port) }
        if let problem = game.problem { g.string("problem", problem) }
        if let notice = game.notice { g.string("notice", notice) }
        g.number("round", game.round)
        g.raw("scores", "[" + game.standings.map { s in
            var o = Fields()
            o.string("name", s.name)
            o.number("points", s.points)
            o.number("rank", s.rank)
            return o.closed
        }.joined(separator: ",") + "]")
        return g.closed
    }

    /// The robots' round as `{"playing":…,"notice":…,"round":N,"rule":…,"task":…,"standings":[{"rank","robot","name",
    /// "result","place","seconds","hold"}…]}` (`round` and the rest absent before the first round; `rank`
    /// absent for an out robot; `place` and `seconds` once it completed the task; `hold` under the hold rule).
    /// Names are the signed names as ``TeacherRobotRound`` keeps them (``DisplayText``).
    static func robotGame(_ game: TeacherRobotGame.Board) -> String {
        var g = Fields()
        g.bool("playing", game.playing)
        if let notice = game.notice { g.string("notice", notice) }
        guard let round = game.round else { return g.closed }
        g.number("round", round.number)
        g.string("rule", round.rule)
        g.string("task", round.task)
        g.raw("standings", "[" + round.standings.map { s in
            var o = Fields()
            if let rank = s.rank { o.number("rank", rank) }
            o.string("robot", s.robot)
            o.string("name", s.name)
            o.string("result", s.result)
            if let place = s.place { o.number("place", place) }
            if let seconds = s.seconds { o.raw("seconds", seconds) }
            if let hold = s.hold { o.raw("hold", hold) }
            return o.closed
        }.joined(separator: ",") + "]")
        return g.closed
    }

    /// Everything at once, as a dashboard's first push is (``TeacherPush``), on the timeline
    /// that starts at `now`.
    static func json(_ rows: [TeacherLink.Row], now: ContinuousClock.Instant, roster: Roster? = nil, missing: [String] = [],
                     game: TeacherGame.Board? = nil, dropped: Int = 0, watchingSince: ContinuousClock.Instant? = nil,
                     robotGame: TeacherRobotGame.Board? = nil) -> String {
        var push = TeacherPush(epoch: now)
        return push.next(rows, now: now, roster: roster, missing: missing, game: game, dropped: dropped, watchingSince: watchingSince,
                         robotGame: robotGame)
            ?? "{}"
    }

    /// A JSON object's members, written in the order given. Keys are the literals above (no
    /// quoting needed); string values are quoted by ``JSONText/quote(_:)``.
    struct Fields {
        private var text = "{"

        var closed: String { text + "}" }

        mutating func raw(_ key: String, _ json: String) {
            if text.utf8.count > 1 { text += "," }
            text += "\""
            text += key
            text += "\":"
            text += json
        }

        mutating func string(_ key: String, _ value: String) { raw(key, JSONText.quote(value)) }
        mutating func string(_ key: String, _ value: WireText) { string(key, value.text) }
        mutating func number(_ key: String, _ value: Int) { raw(key, String(value)) }
        mutating func bool(_ key: String, _ value: Bool) { raw(key, value ? "true" : "false") }
        mutating func strings(_ key: String, _ values: [String]) {
            raw(key, "[" + values.map(JSONText.quote).joined(separator: ",") + "]")
        }
    }
}
