import Console
import ControlPlane
import ControlWire
import Controller
import SystemIO

/// Rides along with a ``RobotController``'s send loop: the classroom control session does the
/// protocol (hello, accept, pings, the secret); this forwards to it and turns what it learns into
/// the controller's answers — the first accept or refusal (``connected``) and every change of the
/// robot's state (``states``). Called on the loop's thread only.
final class StateWatcher: SendLoopCompanion {
    private let session: ControlSession
    private let connected: OneShot<Result<String, AnalogRemoteError>>
    private let states: Broadcast<RobotState>
    private let sensors: Broadcast<SensorReading>?
    private var last: RobotState?
    private var lastReading: SensorReading?

    init(session: ControlSession, connected: OneShot<Result<String, AnalogRemoteError>>, states: Broadcast<RobotState>,
         sensors: Broadcast<SensorReading>? = nil) {
        self.session = session
        self.connected = connected
        self.states = states
        self.sensors = sensors
    }

    var descriptor: Int32? { session.descriptor }
    var nextDeadline: ContinuousClock.Instant? { session.nextDeadline }
    var allowsStates: Bool { session.allowsStates }
    var statusParts: [String] { session.statusParts }
    var endFailure: String? { session.endFailure }
    func wrapState(_ packet: [UInt8]) -> [UInt8]? { session.wrapState(packet) }
    func sendFailed(_ error: SystemError) { session.sendFailed(error) }
    func lead(now: ContinuousClock.Instant, colour: Bool) -> String? { session.lead(now: now, colour: colour) }

    func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
        service(socket: socket, peer: peer, now: now, readable: true)
    }

    func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant, readable: Bool) -> [CompanionAction] {
        let actions = session.service(socket: socket, peer: peer, now: now, readable: readable)
        switch session.snapshot.phase {
        case .accepted(let name): connected.resolve(.success(name))
        case .unanswered: connected.resolve(.success(""))
        case .idle, .waiting, .refused:
            // The kernel passed on an ICMP port unreachable (the socket is connected): nothing
            // listens there, so the initializer fails now rather than after its timeout.
            if session.feedback.noReceiver {
                connected.resolve(.failure(AnalogRemoteError(.peerUnreachable,
                    "\(session.feedback.target): nothing listens on that UDP port (is the receiver running there, on that port?)")))
            }
        }
        if let report = session.feedback.report {
            let state = RobotState(report.state)
            if state != last {
                last = state
                states.setReplay([state])
                states.yield(state)
            }
        }
        if let sensors, let report = session.feedback.sensors {
            let reading = SensorReading(report.block)
            if reading != lastReading {
                lastReading = reading
                sensors.setReplay([reading])
                sensors.yield(reading)
            }
        }
        return actions
    }

    func finish(socket: UDPSocket?, peer: SocketAddress?) {
        session.finish(socket: socket, peer: peer)
    }
}
