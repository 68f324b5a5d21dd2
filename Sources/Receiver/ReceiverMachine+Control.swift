import ControlPlane
import ControlWire
import Logging
import RemoteWire
import SystemIO

/// The control plane's output (Protocol.md §7): its datagrams to send, its effects applied to
/// the engine, the reporter and the desk, and the engine's notices as log lines.
extension ReceiverMachine {
    /// Sends what the plane asks for and applies its effects.
    mutating func handle(_ output: ControlPlane<SocketAddress>.Output, at now: Tick) {
        for (to, datagram) in output.datagrams { actions.append(.send(datagram, to: to)) }
        guard !output.effects.isEmpty else { return }
        let instant = now.instant
        for effect in output.effects {
            switch effect {
            case .accepted(let source, let name):
                reporter.accepted(source)
                if helloAllowed(source, at: instant) {
                    if let s = allowLine(.notice, at: now) { log(.notice, "controller said hello: accepted", ["controller": "\(name)", "address": "\(source)"], suppressed: s) }
                }
            case .denied(_, nil, _):
                break   // a plain sender's states: logged once per source by the engine (notAdmitted)
            case .denied(let source, let name?, let deny):
                sendReport(reporter.denied(deny), to: source)
                guard helloAllowed(source, at: instant) else { continue }
                if let s = allowLine(.notice, at: now) { log(.notice, "controller denied: \(deny.text)",
                        ["controller": "\(name)", "address": "\(source)", "reason": "\(deny.reason.rawValue)"], suppressed: s) }
            case .left(let source, let name):
                var metadata: Logger.Metadata = ["address": "\(source)"]
                if let name { metadata["controller"] = "\(name)" }
                log(.notice, "controller said bye", metadata)
                reporter.left(source)
                apply(engine.released(source, at: now))
            case .teacher(let stop, let source):
                log(.debug, "stop-all taken", ["from": "\(source)", "stop": "\(stop)"])
                apply(engine.teacher(stop: stop, at: now))
            case .stopRefused(let source, let why):
                if let s = allowLine(.warning, at: now) { log(.warning, "stop-all refused: \(why)", ["from": "\(source)"], suppressed: s) }
            case .malformed(let source, let error):
                if let s = allowLine(.debug, at: now) { log(.debug, "\(error)", ["controller": "\(source)"], suppressed: s) }
            case .attemptFailed(let source, let what, let failed):
                if let s = allowLine(.warning, at: now) { log(.warning, "wrong \(what) tried", ["address": "\(source)", "failed": "\(failed)"], suppressed: s) }
            case .attemptThrottled(let source, let throttled):
                if let s = allowLine(.warning, at: now) { log(.warning, "attempt refused: too many pairing codes or secrets tried",
                        ["address": "\(source)", "throttled": "\(throttled)"], suppressed: s) }
            case .envelopeRefused(let source, let why, let refused):
                if let s = allowLine(.warning, at: now) { log(.warning, "authenticated datagram refused",
                        ["address": "\(source)", "why": "\(why.rawValue)", "refused": "\(refused)"], suppressed: s) }
            case .contenderDenied(let source, let name, let deny):
                guard helloAllowed(source, at: instant) else { continue }
                if let s = allowLine(.notice, at: now) { log(.notice, "hello from the address of a live connection refused (that connection is untouched): \(deny.text)",
                        ["controller": "\(name)", "address": "\(source)", "reason": "\(deny.reason.rawValue)"], suppressed: s) }
            case .moved(let old, let new, let name):
                let owner = engine.ownership.owner == old
                log(.notice, owner ? "the driving controller moved to a new address: still the owner" : "controller moved to a new address",
                    ["controller": "\(name ?? "-")", "from": "\(old)", "address": "\(new)"])
                apply(engine.moved(from: old, to: new, at: now))
            case .teacherCommand(let source, let command):
                teacherCommand(command, from: source, at: now)
            case .teacherRefused(let source, let action, let why):
                if let s = allowLine(.warning, at: now) { log(.warning, "teacher command refused: \(why)", ["from": "\(source)", "action": "\(action.name)"], suppressed: s) }
            case .pong(let source, let id, _):
                desk.pong(id: id, from: source, now: instant)
            }
        }
    }

    private mutating func helloAllowed(_ source: SocketAddress, at now: ContinuousClock.Instant) -> Bool {
        helloNotices.allow(source, at: now)
    }

    /// An engine notice as a log line (and a status redraw for a failsafe or the teacher's stop).
    mutating func log(_ notice: Engine.Notice) {
        let now = lastTick
        switch notice {
        case .tookOwnership(let source, let previous):
            // Rate limited: under `--accept any` ownership changes with every packet whose source
            // differs from the last one.
            if let s = allowLine(.notice, at: now) {
                var metadata = who(source)
                if let previous { metadata["previous"] = "\(plane.displayName(of: previous)?.text ?? previous.description)" }
                log(.notice, "controller owns the robot", metadata, suppressed: s)
            }
        case .ownerSilent(let source):
            log(.notice, "owner silent, robot free for any controller", who(source))
        case .failsafe(let reason):
            let why = reason == .boardLink ? "board link changed" : "no state for \(settings.failsafeMilliseconds) ms"
            actions.append(.statusChanged)
            let kept = reason == .silence && engine.ownership.reclaim > .zero
                ? "; the robot stays reserved for its owner for \(engine.ownership.reclaim.components.seconds) s" : ""
            log(.warning, "FAILSAFE: motors stopped (\(why)); waiting for a resting state (no forward/backward, level)\(kept)")
        case .holding(let source):
            log(.notice, "failsafe on: holding states that would move the robot until a resting one arrives", who(source))
        case .resumed(let source):
            log(.notice, "resting state received, driving again", who(source))
        case .ignored(let source, let owner):
            if let s = allowLine(.notice, at: now) { log(.notice, "ignoring controller: the robot is owned by another",
                    who(source).merging(["owner": "\(plane.displayName(of: owner)?.text ?? owner.description)"]) { $1 }, suppressed: s) }
        case .bad(let source, let error):
            if let s = allowLine(.warning, at: now) { log(.warning, "bad packet: \(error)", ["controller": "\(source)"], suppressed: s) }
        case .control(let source, let length):
            if let s = allowLine(.debug, at: now) { log(.debug, "first control datagram from this source", ["controller": "\(source)", "bytes": "\(length)"], suppressed: s) }
        case .notAdmitted(let source) where plane.mayDrive(source):
            if let s = allowLine(.notice, at: now) { log(.notice, "ignoring controller: the teacher kicked it or locked the robot to another student", who(source), suppressed: s) }
        case .notAdmitted(let source):
            if let s = allowLine(.notice, at: now) { log(.notice, "ignoring controller: not paired (this receiver runs --accept paired; the controller needs --pair CODE)",
                    who(source), suppressed: s) }
        case .ownerLeft(let source):
            log(.notice, "owner said bye: motors stopped, robot free (the next controller must rest first)", who(source))
        case .teacher(let stopped):
            actions.append(.statusChanged)
            if stopped {
                log(.warning, "STOPPED BY TEACHER: motors 0, every state held until the teacher releases")
            } else {
                log(.notice, "released by the teacher: waiting for a resting state (no forward/backward, level)")
            }
        }
    }

    // MARK: Robot-state reports (Protocol.md §7.9)

    /// The reports due this wake-up, to every controller that said hello: robot-state, then
    /// the board's sensor block (``latestSensors``) when it changed or is due again.
    mutating func reportRobotState(at now: Tick) {
        for (source, report) in Self.reportsDue(&reporter, plane: plane, engine: engine, now: now.instant) {
            sendReport(report, to: source)
        }
        for (source, sensors) in reporter.sensorsDue(latest: latestSensors, now: now.instant) {
            for (to, datagram) in plane.robotSensors(sensors, to: source).datagrams { actions.append(.send(datagram, to: to)) }
        }
    }

    /// Static, with the parts as arguments: closures over `self` inside a mutating call would
    /// overlap its access (and a copy of the plane per wake-up is what this avoids).
    private static func reportsDue(_ reporter: inout RobotStateReporter<SocketAddress>, plane: ControlPlane<SocketAddress>,
                                   engine: Engine, now: ContinuousClock.Instant) -> [(SocketAddress, RobotReport)] {
        reporter.prune(now: now) { plane.peers.hasChannel($0) && plane.displayName(of: $0) != nil }
        // `OWNED BY` names the owner by its display name, never by its address (which is all a
        // spoofer would need): a plain sender has no name.
        return reporter.due(engine: engine, name: { plane.displayName(of: $0) ?? "a controller without a name" })
    }

    mutating func sendReport(_ report: RobotReport, to source: SocketAddress) {
        for (to, datagram) in plane.robotState(report, to: source).datagrams { actions.append(.send(datagram, to: to)) }
    }

    /// A ping (answered by the control plane with a pong): the report is repeated after it.
    static func isPing(_ bytes: [UInt8]) -> Bool {
        bytes.count >= ControlHeader.size && ControlHeader.looksLikeControl(bytes) && bytes[3] == ControlType.ping.rawValue
    }
}
