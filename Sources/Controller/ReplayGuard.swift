import ControlPlane
import ControlWire
import SystemIO

/// Ends a replay when the robot reports a teacher's stop-all (Protocol.md §7.9): a route played
/// without hands must not carry on by itself once the teacher has stopped it. (The receiver
/// already holds every state while stopped; this makes the controller stop too, neutral ×3,
/// with a line saying why.)
package final class ReplayGuard: SendLoopCompanion {
    private weak var session: ControlSession?
    private var ended = false

    package init(_ session: ControlSession) { self.session = session }

    package var descriptor: Int32? { nil }
    package var nextDeadline: ContinuousClock.Instant? { nil }
    package var allowsStates: Bool { true }
    package var statusParts: [String] { [] }
    package func finish(socket: UDPSocket?, peer: SocketAddress?) {}

    package func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
        guard !ended, session?.feedback.report?.state == .teacherStop else { return [] }
        ended = true
        return [.end(.refused("replay stopped: the teacher's stop-all holds the robot (neutral sent)"))]
    }
}
