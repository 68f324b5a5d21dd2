import ControlPlane
import ControlWire
import RemoteWire

/// What the driver is told about the receiver and the robot, as a value type with an injected
/// clock (the control session feeds it; the status line and the log read it):
///
/// - the latest robot-state report (Protocol.md §7.9), ordered by revision per receiver
///   connection id, so a late, older report never replaces a newer one;
/// - whether anything ever answered (any control datagram from the receiver), and when last;
/// - whether the kernel said nothing listens there (ECONNREFUSED from an ICMP port unreachable).
package struct DriverFeedback: Sendable {
    /// How long without an answer before the driver is told (Protocol.md §7.5 pings once a second).
    package static let silenceLimit: Duration = .seconds(2)

    /// The receiver's address as the driver should read it (`127.0.0.1:27183`).
    package private(set) var target: String
    package private(set) var report: RobotReport?
    private var reportConnection: UInt32?
    /// The latest `robot-sensors` report (Protocol.md §7.9), ordered by sample per connection id.
    package private(set) var sensors: RobotSensors?
    private var sensorsConnection: UInt32?
    /// When the latest robot-sensors report (new or a repeat) was taken.
    package private(set) var sensorsHeard: ContinuousClock.Instant?
    package private(set) var started: ContinuousClock.Instant
    package private(set) var firstAnswer: ContinuousClock.Instant?
    package private(set) var lastAnswer: ContinuousClock.Instant?
    /// Set by ECONNREFUSED, cleared by the next answer.
    package private(set) var noReceiver = false

    package init(target: String, now: ContinuousClock.Instant) {
        self.target = target
        started = now
    }

    /// A new destination: everything known about the old one is forgotten.
    package mutating func restart(target: String, now: ContinuousClock.Instant) {
        self = DriverFeedback(target: target, now: now)
    }

    /// Any control datagram from the receiver arrived.
    package mutating func answered(now: ContinuousClock.Instant) {
        if firstAnswer == nil { firstAnswer = now }
        lastAnswer = now
        noReceiver = false
    }

    /// A robot-state report from connection `connection`. Returns true when what the driver sees
    /// changed (a repeat or an older report returns false).
    package mutating func take(_ new: RobotReport, connection: UInt32, now: ContinuousClock.Instant) -> Bool {
        answered(now: now)
        if let report, reportConnection == connection, !new.isNewer(than: report) { return false }
        let changed = report.map { !$0.sameContent(as: new) } ?? true
        report = new
        reportConnection = connection
        return changed
    }

    /// A robot-sensors report from connection `connection`. Returns whether to tell it: a newer
    /// sample or a repeat of the current one (the receiver repeats at least once a second);
    /// false for an older sample (reordered on the way).
    package mutating func take(_ new: RobotSensors, connection: UInt32, now: ContinuousClock.Instant) -> Bool {
        answered(now: now)
        if let sensors, sensorsConnection == connection, new.sample != sensors.sample, !new.isNewer(than: sensors) { return false }
        sensors = new
        sensorsConnection = connection
        sensorsHeard = now
        return true
    }

    /// The kernel reported ECONNREFUSED for the socket. Returns true the first time since the
    /// last answer (worth one log line).
    package mutating func connectionRefused() -> Bool {
        defer { noReceiver = true }
        return !noReceiver
    }

    /// How long nothing has answered, once that is at least ``silenceLimit``; nil otherwise.
    package func silence(now: ContinuousClock.Instant) -> Duration? {
        let since = now - (lastAnswer ?? started)
        return since >= Self.silenceLimit ? since : nil
    }

    /// The status line's lead: what the robot does (or that nothing answers), first, so a narrow
    /// terminal still shows it. nil once something answered that sends no robot state (the
    /// button game's host, a receiver that predates §7.9).
    package func headline(now: ContinuousClock.Instant) -> (text: WireText, tone: Tone)? {
        if noReceiver { return ("NO RECEIVER at \(target)", .alarm) }
        if let quiet = silence(now: now) {
            let seconds = Int(quiet.components.seconds)
            return (firstAnswer == nil ? "NO ANSWER from \(target) for \(seconds) s" : "NO ANSWER for \(seconds) s", .alarm)
        }
        guard let report else { return firstAnswer == nil ? ("CONNECTING", .calm) : nil }
        return (report.headline, Self.tone(report.state))
    }

    package enum Tone: Sendable { case good, calm, warn, alarm }

    static func tone(_ state: RobotReport.State) -> Tone {
        switch state {
        case .driving: .good
        case .free: .calm
        case .owned, .failsafe(.startup), .failsafe(.released): .warn
        case .failsafe, .refused, .teacherStop, .boardMissing: .alarm
        }
    }
}

extension RobotReport {
    /// Log metadata: `robot_state`, `cause` or `reason`, `board`, `text`, `revision`.
    package var metadata: [String: String] {
        var m = ["robot_state": state.name, "board": board.text, "revision": "\(revision)"]
        switch state {
        case .failsafe(let cause): m["cause"] = cause.name
        case .refused(let reason, let text): m["reason"] = "\(reason.rawValue)"; m["text"] = text.text
        case .owned(let text), .boardMissing(let text): m["text"] = text.text
        default: break
        }
        return m
    }
}
