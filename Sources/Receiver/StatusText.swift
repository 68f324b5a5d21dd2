import BoardProtocol
import RemoteWire
import SystemIO

/// The live status line of `analog-remote receive`, e.g.
/// `stock 1.1 34B · owner 127.0.0.1:40512 50/s · angle +0.50 · forward+a · left +103 right +25 · bad 0 ignored 3 · DRIVING`
/// The owner shows by display name once it said hello (`owner Ann 50/s`); `classroom` adds the
/// pairing code and the rate-limit count (``ControlPlane/statusParts``).
enum StatusText {
    static func line(engine: ReceiverEngine<SocketAddress>, now: ContinuousClock.Instant,
                     name: (SocketAddress) -> WireText? = { _ in nil }, classroom: [String] = [], board: String? = nil) -> String {
        var parts: [String] = []
        if let board { parts.append(board) }
        if let owner = engine.ownership.owner, let record = engine.controllers[owner] {
            parts.append("owner \(name(owner)?.text ?? owner.description) \(record.packetsPerSecond(at: now))/s")
            if let state = record.lastState {
                parts.append("angle " + signed(state.angle))
                parts.append("\(state.buttons)")
            }
        } else {
            parts.append("no controller")
        }
        parts.append("left \(signed(engine.wheels.left)) right \(signed(engine.wheels.right))")
        parts.append("bad \(engine.counters.bad) ignored \(engine.counters.ignored)")
        parts += classroom
        if engine.stoppedByTeacher {
            parts.append("STOPPED BY TEACHER")
            return parts.joined(separator: " · ")
        }
        switch engine.failsafe.state {
        case .driving: parts.append("DRIVING")
        case .waitingForNeutral(.startup): parts.append("READY: waiting for a resting state")
        case .waitingForNeutral(.silence): parts.append("FAILSAFE (silence): waiting for a resting state")
        case .waitingForNeutral(.boardLink): parts.append("FAILSAFE (board link): waiting for a resting state")
        case .waitingForNeutral(.released): parts.append("READY (controller left): waiting for a resting state")
        case .waitingForNeutral(.teacher): parts.append("RELEASED by teacher: waiting for a resting state")
        case .waitingForNeutral(.reloaded): parts.append("RELOADED: waiting for a resting state")
        }
        return parts.joined(separator: " · ")
    }

    /// `stock 1.1 34B`: the profile, the firmware's product id and version, the map size.
    static func board(_ resolution: BoardResolution) -> String {
        let id = resolution.identity
        return "\(resolution.kind.rawValue) \(id.productID).\(id.version) \(id.mapSize >= BoardIdentity.probeLength ? "\(id.mapSize)+" : "\(id.mapSize)")B"
    }

    static func signed(_ v: Int) -> String { v > 0 ? "+\(v)" : "\(v)" }

    static func signed(_ angle: Float) -> String {
        let hundredths = Int((Double(angle) * 100).rounded())
        let sign = hundredths < 0 ? "-" : "+"
        let m = abs(hundredths)
        return "\(sign)\(m / 100).\(m % 100 < 10 ? "0" : "")\(m % 100)"
    }
}
