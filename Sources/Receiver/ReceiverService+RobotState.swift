import ControlPlane
import ControlWire
import RemoteWire
import SystemIO

/// Robot-state reports to the controllers that said hello (Protocol.md §7.9): on every change,
/// in the loop turn that caused it, and after every pong.
extension ReceiverService {
    /// Sends the reports due this loop turn (``RobotStateReporter/due(engine:name:)``).
    func reportRobotState(at now: ContinuousClock.Instant) {
        reporter.prune(now: now) { plane.peers.hasChannel($0) && plane.displayName(of: $0) != nil }
        // `OWNED BY` names the owner by its display name, never by its address (which is all a
        // spoofer would need): a plain sender has no name.
        for (source, report) in reporter.due(engine: engine, name: { plane.displayName(of: $0) ?? "a controller without a name" }) {
            sendReport(report, to: source)
        }
        recordBlackBoxSensors()
        for (source, sensors) in reporter.sensorsDue(latest: board.sensors, now: now) {
            for (to, datagram) in plane.robotSensors(sensors, to: source).datagrams { _ = try? socket.send(datagram, to: to) }
        }
    }

    func sendReport(_ report: RobotReport, to source: SocketAddress) {
        for (to, datagram) in plane.robotState(report, to: source).datagrams { _ = try? socket.send(datagram, to: to) }
    }

    /// A ping (answered by the control plane with a pong): the report is repeated after it.
    static func isPing(_ bytes: [UInt8]) -> Bool {
        bytes.count >= ControlHeader.size && ControlHeader.looksLikeControl(bytes) && bytes[3] == ControlType.ping.rawValue
    }
}
