import Console
import ControlWire
import Logging
import ControlPlane
import RemoteWire
import SystemIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The driver's side of robot-state reports (Protocol.md §7.9) and of "is anyone there":
/// every report that changes what the driver sees is logged (`robot_state=…` in the JSON log)
/// and leads the status line; ECONNREFUSED says "no receiver at HOST:PORT" at once; two seconds
/// without an answer are said once; a controller that never heard back ends non-zero.
extension ControlSession {
    /// Reads one datagram; ECONNREFUSED (an ICMP port unreachable for an earlier send) is taken
    /// as "nothing listens there" and reading stops for this turn.
    func receive(_ socket: UDPSocket) -> (Int, SocketAddress)? {
        do {
            guard let got = try socket.receive(into: &buffer) else { return nil }
            return (got.length, got.from)
        } catch {
            if error.errno == ECONNREFUSED { refusedByKernel() }
            return nil
        }
    }

    /// The send loop saw a send fail.
    package func sendFailed(_ error: SystemError) {
        if error.errno == ECONNREFUSED { refusedByKernel() }
    }

    func refusedByKernel() {
        guard feedback.connectionRefused() else { return }
        logger.warning("no receiver at \(feedback.target): nothing listens on that UDP port (is `analog-remote receive` running there, on that --port?)",
                       metadata: ["robot_state": "no-receiver"])
    }

    /// Any control datagram from the receiver: an answer; a robot-state report is shown.
    func heard(_ datagram: ControlDatagram, now: ContinuousClock.Instant) {
        everAnswered = true
        if toldSilence {
            toldSilence = false
            logger.notice("\(feedback.target) answers again")
        }
        if datagram.header.type == .robotSensors {
            heardSensors(datagram, now: now)
            return
        }
        guard datagram.header.type == .robotState,
              case .robotState(let report)? = try? ControlMessage.decode(type: .robotState, payload: datagram.payload) else {
            feedback.answered(now: now)
            return
        }
        if feedback.take(report, connection: datagram.header.connection, now: now) {
            let metadata = Logger.Metadata(uniqueKeysWithValues: report.metadata.map { ($0.key, .string($0.value)) })
            switch DriverFeedback.tone(report.state) {
            case .alarm: logger.warning("robot: \(report.headline)", metadata: metadata)
            default: logger.notice("robot: \(report.headline)", metadata: metadata)
            }
        }
    }

    /// Says once when nothing has answered for ``DriverFeedback/silenceLimit``.
    func watchSilence(now: ContinuousClock.Instant) {
        // (Not when the kernel already said nothing listens there: that line said it better.)
        guard !toldSilence, phase != .refused, !feedback.noReceiver, let quiet = feedback.silence(now: now) else { return }
        toldSilence = true
        let seconds = Int(quiet.components.seconds)
        let what = feedback.firstAnswer == nil ? "no answer from \(feedback.target) for \(seconds) s (is the receiver running there?)"
            : "no answer from \(feedback.target) for \(seconds) s"
        logger.warning("\(what)", metadata: ["robot_state": "no-answer"])
    }

    /// The status line's first part, coloured on a terminal unless NO_COLOR.
    package func lead(now: ContinuousClock.Instant, colour: Bool) -> String? {
        guard phase != .idle else { return nil }
        guard let (text, tone) = feedback.headline(now: now) else { return nil }
        let c: Colour = switch tone {
        case .good: .green
        case .calm: .plain
        case .warn: .yellow
        case .alarm: .red
        }
        return c.paint(text.text, on: colour)
    }

    /// A robot-sensors report: logged as `sensors` (an object of the board's raw values: in the
    /// JSON log `{"sensor1":…,"switch":…,"temperature":…,"humidity":…}`) at info when a value
    /// changed, so a log reader sees every change and a quiet board adds nothing; the receiver's
    /// repeats (at least once a second) are logged at debug.
    func heardSensors(_ datagram: ControlDatagram, now: ContinuousClock.Instant) {
        guard case .robotSensors(let sensors)? = try? ControlMessage.decode(type: .robotSensors, payload: datagram.payload) else {
            feedback.answered(now: now)
            return
        }
        guard feedback.take(sensors, connection: datagram.header.connection, now: now) else { return }
        let values = sensors.fields.map(\.value)
        let changed = loggedSensors != values
        guard changed || logger.logLevel <= .debug else { return }
        loggedSensors = values
        let fields = Logger.Metadata(uniqueKeysWithValues: sensors.fields.map { ($0.name, .string("\($0.value)")) })
        logger.log(level: changed ? .info : .debug, "sensors", metadata: ["sensors": .dictionary(fields), "sample": "\(sensors.sample)"])
    }

    /// Why the controller should end non-zero: it never heard a single answer (nil otherwise).
    package var endFailure: String? {
        guard phase != .idle, phase != .refused, !everAnswered else { return nil }
        if feedback.noReceiver {
            return "no receiver at \(feedback.target): nothing listened on that UDP port (check the receiver's `receiving on udp port N` line, or use --session)"
        }
        return "no answer from \(feedback.target): no receiver answered (is it running, and on that port? an older receiver needs --plain)"
    }
}
