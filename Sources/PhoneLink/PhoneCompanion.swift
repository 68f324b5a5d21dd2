import ControlPlane
import ControlWire
import Controller
import RemoteWire
import SystemIO

/// Rides along with a phone's send loop: the classroom control session (hello with the typed
/// name, pairing code, pings) does the protocol; this only watches its ``ControlSession/snapshot``
/// and tells the page when it changes (link phase at once, round-trip time and loss at most
/// twice a second).
final class PhoneCompanion: SendLoopCompanion {
    private let session: ControlSession
    private let report: @Sendable (PageReport) -> Void
    private var lastPhase: ControlSession.Snapshot.Phase?
    private var lastReport: ContinuousClock.Instant?
    /// The robot-state headline last passed to the page (Protocol.md §7.9).
    private var lastRobot: WireText?
    /// The sensor sample last passed to the page (Protocol.md §7.9.1).
    private var lastSensors: RobotSensors?

    init(session: ControlSession, report: @escaping @Sendable (PageReport) -> Void) {
        self.session = session
        self.report = report
    }

    var descriptor: Int32? { session.descriptor }
    var nextDeadline: ContinuousClock.Instant? { session.nextDeadline }
    var allowsStates: Bool { session.allowsStates }
    var statusParts: [String] { session.statusParts }

    func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
        service(socket: socket, peer: peer, now: now, readable: true)
    }

    func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant, readable: Bool) -> [CompanionAction] {
        let actions = session.service(socket: socket, peer: peer, now: now, readable: readable)
        let snapshot = session.snapshot
        let changed = snapshot.phase != lastPhase
        var periodic = false
        if changed || lastReport.map({ now - $0 >= .milliseconds(500) }) ?? true {
            lastPhase = snapshot.phase
            lastReport = now
            periodic = true
            var status = Self.status(snapshot)
            if session.feedback.report != nil { status.robotState = true }
            report(.status(status))
        }
        // What the robot does for this phone, as the receiver reports it: at once on a change, and
        // again with every periodic status (the page's outbox keeps only the newest reports, and a
        // `robotState` status tells the page to leave its chip to this message).
        if let robot = session.feedback.report, let (text, tone) = session.feedback.headline(now: now),
           text != lastRobot || periodic {
            lastRobot = text
            report(.robot(state: robot.state.name, text: text, level: Self.level(tone)))
        }
        // What the robot senses: each new reading at once, and again with every periodic status.
        if let sensors = session.feedback.sensors, sensors != lastSensors || periodic {
            lastSensors = sensors
            report(.sensors(sensors))
        }
        return actions
    }

    func finish(socket: UDPSocket?, peer: SocketAddress?) {
        session.finish(socket: socket, peer: peer)
    }

    /// The page's chip colour for a headline's tone.
    static func level(_ tone: DriverFeedback.Tone) -> String {
        switch tone {
        case .good: "ok"
        case .calm: ""
        case .warn: "warn"
        case .alarm: "bad"
        }
    }

    static func status(_ s: ControlSession.Snapshot) -> PageReport.Status {
        let rtt = s.roundTrip.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 }
        switch s.phase {
        case .idle: return .init(link: "connecting")
        case .waiting: return .init(link: "connecting")
        case .accepted(let name): return .init(link: "driving", receiver: name.isEmpty ? nil : name, rtt: rtt, loss: s.loss)
        case .unanswered: return .init(link: "unanswered")
        case .refused: return .init(link: "refused")
        }
    }
}
