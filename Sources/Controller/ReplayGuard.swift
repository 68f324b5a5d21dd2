import ControlPlane
import SystemIO

/// Ends a replay when the robot reports a teacher's stop-all (Protocol.md §7.9): a route played
/// without hands must not carry on by itself once the teacher has stopped it. (The receiver
/// already holds every state while stopped; this makes the controller stop too, neutral ×3,
/// with a line saying why.)
public final class ReplayGuard: SendLoopCompanion {
    private weak var session: ControlSession?
    private var ended = false

    public init(_ session: ControlSession) { self.session = session }

    public var descriptor: Int32? { nil }
    public var nextDeadline: ContinuousClock.Instant? { nil }
    public var allowsStates: Bool { true }
    public var statusParts: [String] { [] }
    public func finish(socket: UDPSocket?, peer: SocketAddress?) {}

    public func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
        guard !ended, session?.feedback.report?.state == .teacherStop else { return [] }
        ended = true
        return [.end(.refused("replay stopped: the teacher's stop-all holds the robot (neutral sent)"))]
    }
}
