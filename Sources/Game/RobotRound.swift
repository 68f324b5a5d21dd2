import BoardProtocol
import RemoteWire

/// A round the robots judge (value type, injected clock): each robot's result comes only from
/// the sensor reports fed for it (``report(robot:_:now:)``, which the caller takes from that
/// robot's own authenticated connection), and a robot whose reports stop is out, never a winner.
/// Robots are placed in the order they complete the task (the first one wins); the round is over
/// when no robot is still playing, or at ``end(now:)``.
///
/// - ``Rule/firstSwitch``: the task is a **press** of the robot's switch: a report with the
///   switch set after one with it clear, in this round (a switch held down since before the round
///   does not count until it is let go).
/// - ``Rule/hold(sensor:above:threshold:time:)``: the task is holding sensor N above (or below)
///   the threshold for the whole time; the time restarts whenever a report says otherwise. The
///   hold is timed from the report that began it and completes at its end only while the robot
///   keeps reporting.
/// - A robot with no report for ``silenceLimit`` (since its last one, or since the start) is out
///   for the rest of the round: the receiver repeats its block at least once a second, so a
///   silent robot is one whose reports stopped (unplugged board, dead link, forged traffic dropped).
package struct RobotRound: Sendable {
    package enum Rule: Hashable, Sendable, CustomStringConvertible {
        case firstSwitch
        /// `sensor`: 1…4; `above`: the reading must be > threshold (else < threshold).
        case hold(sensor: Int, above: Bool, threshold: UInt8, time: Duration)

        /// `switch`, or `hold:SENSOR:above|below:THRESHOLD:SECONDS` (the CLI's spelling).
        package init?(_ text: String) {
            if text == "switch" { self = .firstSwitch; return }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 5, parts[0] == "hold", let sensor = Int(parts[1]), (1...4).contains(sensor),
                  parts[2] == "above" || parts[2] == "below", let threshold = UInt8(parts[3]),
                  let seconds = Double(parts[4]), seconds.isFinite, seconds > 0, seconds <= 3600 else { return nil }
            self = .hold(sensor: sensor, above: parts[2] == "above", threshold: threshold,
                         time: .milliseconds(Int64((seconds * 1000).rounded())))
        }

        package var description: String {
            switch self {
            case .firstSwitch: return "switch"
            case .hold(let sensor, let above, let threshold, let time):
                let ms = time.components.seconds * 1000 + time.components.attoseconds / 1_000_000_000_000_000
                let seconds = ms % 1000 == 0 ? "\(ms / 1000)" : "\(Double(ms) / 1000)"
                return "hold:\(sensor):\(above ? "above" : "below"):\(threshold):\(seconds)"
            }
        }

        /// What the players are told: `press your robot's switch first` / `hold sensor 2 above 128 for 3 s`.
        package var task: String {
            switch self {
            case .firstSwitch: return "first to press its robot's switch wins"
            case .hold(let sensor, let above, let threshold, _):
                let seconds = description.split(separator: ":").last.map(String.init) ?? ""
                return "first to hold sensor \(sensor) \(above ? "above" : "below") \(threshold) for \(seconds) s wins"
            }
        }
    }

    package enum Standing: Hashable, Sendable {
        case playing
        /// Completed the task `after` the start (the press's report, or the hold's end); `place`
        /// 1 = the winner.
        case done(place: Int, after: Duration)
        /// Its reports stopped (or never came) before it completed the task.
        case out
        /// Still reporting, the task not done, when the round was ended.
        case lost
    }

    package struct Robot: Hashable, Sendable {
        package let name: String
        package var standing = Standing.playing
        package var lastReport: ContinuousClock.Instant?
        package var reports = 0
        /// The last report's switch state (nil before the first report of the round).
        var switchPressed: Bool?
        /// Since when the hold condition has held, per the reports.
        var holding: ContinuousClock.Instant?
        /// The longest hold so far (for the hold rule's standings).
        package var longestHold: Duration = .zero
    }

    package enum Event: Hashable, Sendable {
        /// The robot's first report of the round.
        case heard(robot: Int)
        case done(robot: Int, place: Int)
        case out(robot: Int)
    }

    /// How long a robot may go without a report (the receiver repeats at least once a second).
    package static let silenceLimit: Duration = .milliseconds(1500)

    package let rule: Rule
    package let started: ContinuousClock.Instant
    package private(set) var robots: [Robot]
    package private(set) var winner: Int?
    private var places = 0
    package private(set) var ended: ContinuousClock.Instant?

    package init(rule: Rule, robots names: [String], now: ContinuousClock.Instant) {
        self.rule = rule
        started = now
        robots = names.map { Robot(name: $0) }
    }

    package var isOver: Bool { ended != nil }

    /// A sensor report of robot `id`, taken from that robot's own connection.
    package mutating func report(robot id: Int, _ block: SensorBlock, now: ContinuousClock.Instant) -> [Event] {
        guard !isOver, robots.indices.contains(id) else { return [] }
        // Silence that ended before this report still put the robot out.
        var events = expireSilent(now: now)
        guard robots[id].standing == .playing else { return events }
        if robots[id].reports == 0 { events.append(.heard(robot: id)) }
        robots[id].lastReport = now
        robots[id].reports += 1
        switch rule {
        case .firstSwitch:
            let pressed = block.isSwitchPressed
            if pressed, robots[id].switchPressed == false {
                events += complete(id, at: now)
            }
            robots[id].switchPressed = pressed
        case .hold(let sensor, let above, let threshold, let time):
            let value = block.sensors[sensor - 1]
            if above ? value > threshold : value < threshold {
                let since = robots[id].holding ?? now
                robots[id].holding = since
                robots[id].longestHold = max(robots[id].longestHold, now - since)
                if now - since >= time { events += complete(id, at: since + time) }
            } else {
                robots[id].holding = nil
            }
        }
        return events
    }

    /// Silent robots out; a hold whose time is up while its robot still reports wins.
    package mutating func tick(now: ContinuousClock.Instant) -> [Event] {
        guard !isOver else { return [] }
        var events = expireSilent(now: now)
        if case .hold(_, _, _, let time) = rule {
            var due: [(id: Int, at: ContinuousClock.Instant)] = []
            for i in robots.indices where robots[i].standing == .playing {
                if let since = robots[i].holding, since + time <= now { due.append((i, since + time)) }
            }
            due.sort { a, b in a.at != b.at ? a.at < b.at : a.id < b.id }
            for (i, at) in due {
                robots[i].longestHold = max(robots[i].longestHold, time)
                events += complete(i, at: at)
            }
        }
        return events
    }

    /// When ``tick(now:)`` has work: the next silence limit or hold end.
    package func deadline() -> ContinuousClock.Instant? {
        guard !isOver else { return nil }
        var candidates: [ContinuousClock.Instant] = []
        for r in robots where r.standing == .playing {
            candidates.append((r.lastReport ?? started) + Self.silenceLimit)
            if case .hold(_, _, _, let time) = rule, let since = r.holding { candidates.append(since + time) }
        }
        return candidates.min()
    }

    /// Ends the round without a winner (time is up, the host stops): robots still playing lose.
    package mutating func end(now: ContinuousClock.Instant) -> [Event] {
        guard !isOver else { return [] }
        let events = expireSilent(now: now)
        finish(now: now)
        return events
    }

    mutating func expireSilent(now: ContinuousClock.Instant) -> [Event] {
        var events: [Event] = []
        for i in robots.indices where robots[i].standing == .playing
            && now - (robots[i].lastReport ?? started) > Self.silenceLimit {
            robots[i].standing = .out
            robots[i].holding = nil
            events.append(.out(robot: i))
        }
        if !robots.contains(where: { $0.standing == .playing }) { finish(now: now) }
        return events
    }

    mutating func complete(_ id: Int, at: ContinuousClock.Instant) -> [Event] {
        places += 1
        robots[id].standing = .done(place: places, after: at - started)
        robots[id].holding = nil
        if places == 1 { winner = id }
        if !robots.contains(where: { $0.standing == .playing }) { finish(now: at) }
        return [.done(robot: id, place: places)]
    }

    mutating func finish(now: ContinuousClock.Instant) {
        ended = now
        for i in robots.indices where robots[i].standing == .playing {
            robots[i].standing = .lost
            if let since = robots[i].holding { robots[i].longestHold = max(robots[i].longestHold, now - since) }
        }
    }

    /// Robots in result order: those that completed the task by place, then those that did not
    /// (for the hold rule by longest hold), then those that were out; each with its rank (out
    /// robots have none).
    package var standings: [(rank: Int?, id: Int)] {
        func key(_ i: Int) -> (Int, Int64) {
            switch robots[i].standing {
            case .done(let place, _): return (0, Int64(place))
            case .playing, .lost:
                let hold = robots[i].longestHold.components
                return (1, -(hold.seconds * 1000 + hold.attoseconds / 1_000_000_000_000_000))
            case .out: return (2, 0)
            }
        }
        let order = robots.indices.sorted { key($0) != key($1) ? key($0) < key($1) : $0 < $1 }
        var out: [(rank: Int?, id: Int)] = []
        for (n, i) in order.enumerated() {
            if robots[i].standing == .out { out.append((nil, i)); continue }
            let rank = n > 0 && key(order[n - 1]) == key(i) ? out[n - 1].rank : n + 1
            out.append((rank, i))
        }
        return out
    }

    /// `won` (place 1), `done`, `lost`, `out`, `playing`.
    package static func word(_ standing: Standing) -> String {
        switch standing {
        case .playing: return "playing"
        case .done(let place, _): return place == 1 ? "won" : "done"
        case .lost: return "lost"
        case .out: return "out"
        }
    }

    package static func seconds(_ d: Duration) -> String {
        let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
        return "\(ms / 1000).\(String(repeating: "0", count: 3 - String(ms % 1000).count))\(ms % 1000)"
    }

    /// CSV (``CSVText``): `rank,robot,result,seconds,reports`; `seconds` is the time from the
    /// start to the task's completion, or the longest hold of the others under the hold rule; an
    /// out robot has no rank.
    package func csv() -> String {
        var text = CSVText.row(["rank", "robot", "result", "seconds", "reports"])
        for (rank, id) in standings {
            let r = robots[id]
            let time: String
            switch (r.standing, rule) {
            case (.done(_, let after), _): time = Self.seconds(after)
            case (_, .hold): time = Self.seconds(r.longestHold)
            default: time = ""
            }
            text += CSVText.row([rank.map(String.init) ?? "", r.name, Self.word(r.standing), time, "\(r.reports)"])
        }
        return text
    }

    /// One line per robot for stdout: `1. robot2 won 1.234 s`, `2. robot1 done 2.000 s`,
    /// `-. robot3 out (its reports stopped)`.
    package var lines: [String] {
        standings.map { rank, id in
            let r = robots[id]
            switch r.standing {
            case .done(_, let after): return "\(rank ?? 0). \(r.name) \(Self.word(r.standing)) \(Self.seconds(after)) s"
            case .out: return "-. \(r.name) out (its reports stopped)"
            case .lost, .playing:
                if case .hold = rule { return "\(rank ?? 0). \(r.name) held \(Self.seconds(r.longestHold)) s" }
                return "\(rank ?? 0). \(r.name) lost"
            }
        }
    }
}
