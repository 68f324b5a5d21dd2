import ControlWire
import Game
import RemoteWire

/// The dashboard's round the robots judge, as a value with an injected clock: ``RobotRound``
/// (the rules `game --judge` uses) fed with the sensor blocks of the watch reports the
/// dashboard's link took — verified under the teacher key, for one of its own live watches,
/// newer than the last (``TeacherLink``, Protocol.md §7.12). Nothing else reaches it.
///
/// The robots are the rows that had proven who they are (a taken report) and read sensors when
/// the round started, keyed by their robot id and named by their signed name (``DisplayText``,
/// a repeated name followed by the id). A report's time is when the link took it: reports come
/// every 0.5 s per robot (§7.12), so a press is seen up to about 0.6 s after it happened (the
/// board's sensor read, then the next report), and a press let go before a report saw it does
/// not count. A report without a sensor block (the board missing) is not fed: the robot is out
/// once its blocks have stopped for ``RobotRound/silenceLimit``.
struct TeacherRobotRound: Sendable {
    struct Entrant: Sendable, Equatable {
        /// The robot id's 8 characters (the report's `robot id`).
        var robot: String
        var name: String
    }

    let number: Int
    private(set) var round: RobotRound
    let entrants: [Entrant]
    private let index: [String: Int]

    /// The key a report is filed under: its robot id as the dashboard shows it.
    static func key(_ report: WatchReport) -> String {
        RobotID(value: report.robotID)?.text ?? String(report.robotID, radix: 16)
    }

    /// The entrants from the rows' last taken reports (rows without one, or whose robot reads no
    /// sensors, are left out: ``leftOut``); one per robot id.
    static func entrants(_ rows: [TeacherLink.Row]) -> (entrants: [Entrant], leftOut: [String]) {
        var seen = Set<String>(), taken: [(key: String, name: String)] = [], leftOut: [String] = []
        for row in TeacherRows.ordered(rows, roster: nil) where !row.gone {
            guard let report = row.report else { continue }
            let name = String(report.name.text.prefix(40))
            guard report.sensors != nil else { leftOut.append(name); continue }
            let key = key(report)
            guard seen.insert(key).inserted else { continue }
            taken.append((key, name))
        }
        var counts: [String: Int] = [:]
        for t in taken { counts[t.name.lowercased(), default: 0] += 1 }
        let entrants = taken.map { t in
            Entrant(robot: t.key, name: t.name.isEmpty || counts[t.name.lowercased()]! > 1 ? "\(t.name) (\(t.key))" : t.name)
        }
        return (entrants, leftOut)
    }

    init(number: Int, rule: RobotRound.Rule, entrants: [Entrant], now: ContinuousClock.Instant) {
        self.number = number
        self.entrants = entrants
        round = RobotRound(rule: rule, robots: entrants.map(\.name), now: now)
        index = Dictionary(entrants.enumerated().map { ($1.robot, $0) }, uniquingKeysWith: { a, _ in a })
    }

    var isOver: Bool { round.isOver }

    /// A report the link took, at the time it took it. True when what the dashboard shows moved
    /// (a report that changes no standing and no hold is not news).
    @discardableResult
    mutating func report(_ report: WatchReport, now: ContinuousClock.Instant) -> Bool {
        guard let id = index[Self.key(report)], let block = report.sensors else { return false }
        let before = board(playing: true)
        // Taken just before the Start reached the round: it counts from the start.
        _ = round.report(robot: id, block, now: max(now, round.started))
        return board(playing: true) != before
    }

    /// Silent robots out, holds that are complete. True when the standings moved.
    @discardableResult
    mutating func tick(now: ContinuousClock.Instant) -> Bool {
        let before = board(playing: true)
        _ = round.tick(now: now)
        return board(playing: true) != before
    }

    func deadline() -> ContinuousClock.Instant? { round.deadline() }

    mutating func end(now: ContinuousClock.Instant) { _ = round.end(now: now) }

    /// `robot round 1 (switch), 3 robots: first to press …; robots: a, b, c` for the log.
    var startText: String {
        "robot round \(number) (\(round.rule)), \(entrants.count) robot\(entrants.count == 1 ? "" : "s"): \(round.rule.task)"
            + (entrants.isEmpty ? "" : "; robots: " + entrants.map(\.name).joined(separator: ", "))
    }

    /// `robot round 1 (switch), 3 robots: 1. robot-2 won 0.812 s; 2. robot-1 done 1.300 s; -. robot-3 out (its reports stopped)`
    var resultText: String {
        "robot round \(number) (\(round.rule)), \(entrants.count) robot\(entrants.count == 1 ? "" : "s")"
            + (entrants.isEmpty ? "" : ": " + round.lines.joined(separator: "; "))
    }

    /// What the dashboard shows.
    func board(playing: Bool) -> Board.Round {
        Board.Round(number: number, rule: "\(round.rule)", task: round.rule.task, standings: round.standings.map { rank, id in
            let r = round.robots[id]
            var row = Board.Row(rank: rank, robot: entrants[id].robot, name: r.name, result: RobotRound.word(r.standing))
            if case .done(let place, let after) = r.standing {
                row.place = place
                row.seconds = RobotRound.seconds(after)
            }
            if case .hold = round.rule { row.hold = RobotRound.seconds(r.longestHold) }
            return row
        })
    }

    /// The robots' round as the dashboard shows it (``TeacherRows/robotGame(_:)``).
    struct Board: Sendable, Equatable {
        struct Row: Sendable, Equatable {
            /// nil: out (no rank).
            var rank: Int?
            var robot: String
            var name: String
            /// `playing`, `won`, `done` (at ``place``), `out` (its reports stopped), `lost`.
            var result: String
            var place: Int?
            /// From the start to the task's completion (`1.234`).
            var seconds: String?
            /// The longest hold so far (hold rule only).
            var hold: String?
        }

        struct Round: Sendable, Equatable {
            var number: Int
            /// `switch` or `hold:N:above|below:T:S`.
            var rule: String
            var task: String
            var standings: [Row]
        }

        var playing = false
        /// The round in play, or the last one played.
        var round: Round?
        /// A refused command, or robots left out of the round: shown until the next Start.
        var notice: String?
    }
}

extension TeacherRobotRound {
    /// The longest hold a round may ask for, in seconds (``RobotRound/Rule`` takes up to an hour;
    /// a lesson's round is shorter).
    static let maxHoldSeconds = 600.0

    /// The rule a dashboard's Start asks for (`rule`: `switch` or `hold`, with `sensor` 1–4,
    /// `side` `above`|`below`, `threshold` 0–255 and `seconds` above 0 up to ``maxHoldSeconds``,
    /// to the millisecond), or the one line that says what is wrong. Built through
    /// ``RobotRound/Rule``'s own spelling, so the rules are the ones `game --judge` takes.
    static func rule(_ kind: String?, sensor: Int?, side: String?, threshold: Int?, seconds: Double?)
        -> Result<RobotRound.Rule, RuleRefusal> {
        func no(_ text: String) -> Result<RobotRound.Rule, RuleRefusal> { .failure(RuleRefusal(text: "not started: " + text)) }
        switch kind {
        case "switch":
            return .success(.firstSwitch)
        case "hold":
            guard let sensor, (1...4).contains(sensor) else { return no("the sensor must be a whole number from 1 to 4") }
            guard let side, side == "above" || side == "below" else { return no("the side must be \"above\" or \"below\"") }
            guard let threshold, (0...255).contains(threshold) else { return no("the threshold must be a whole number from 0 to 255") }
            guard let seconds, seconds.isFinite, seconds >= 0.001, seconds <= maxHoldSeconds else {
                return no("the time must be a number of seconds above 0 and at most \(Int(maxHoldSeconds))")
            }
            let ms = Int((seconds * 1000).rounded())
            let text = "hold:\(sensor):\(side):\(threshold):\(ms % 1000 == 0 ? "\(ms / 1000)" : "\(Double(ms) / 1000)")"
            guard let rule = RobotRound.Rule(text) else { return no("the rule \(text) is not one the round knows") }
            return .success(rule)
        default:
            return no("the rule must be \"switch\" or \"hold\"")
        }
    }

    struct RuleRefusal: Error, Equatable {
        var text: String
    }
}
