import Console
import ControlPlane
import ControlWire
import DriveRecord
import Logging
import RemoteWire
import SystemIO

/// `control --record FILE`: writes what the controller sends and hears, as it happens
/// (Protocol.md §10): the header at once, then every state sent with its time, the robot's
/// reports as they change, the link's round-trip time and loss after each ping, and why it
/// stopped. One line per `write(2)` and nothing kept in memory, so an hour costs what a minute
/// does and a crash loses at most the line being written.
///
/// It rides along with the send loop (``SendLoopCompanion``, before the control session so that
/// the session stays the loop's `companion`) and is told of each state sent (``sent(_:at:)``).
/// A write that fails (disk full) is said once; the drive goes on unrecorded.
package final class DriveRecorder: SendLoopCompanion {
    package let path: String
    private var file: LineFile?
    private let origin: ContinuousClock.Instant
    private let logger: Logger
    /// The session whose reports and link are recorded (nil under `--plain`).
    private weak var session: ControlSession?
    private var lastReport: RobotReport.State?
    private var lastSensors: [Int]?
    private var lastLink: (Duration?, Double?) = (nil, nil)
    package private(set) var lines = 0

    /// Creates `path` (mode 0600, never through a link: ``LineFile/init(creating:mode:)``) and
    /// writes the header (a failure here stops before anything is sent).
    package convenience init(path: String, header: RecordHeader, session: ControlSession?, logger: Logger,
                            now: ContinuousClock.Instant = .now) throws(CommandFailure) {
        let file: LineFile
        do {
            file = try LineFile(creating: path)
        } catch {
            throw CommandFailure("--record: \(error)", kind: .badConfiguration)
        }
        self.init(file: file, header: header, session: session, logger: logger, now: now)
    }

    /// Records into `file`, already created (a phone's recording in `web --record-dir`).
    package init(file: LineFile, header: RecordHeader, session: ControlSession?, logger: Logger, now: ContinuousClock.Instant = .now) {
        path = file.path
        self.file = file
        self.session = session
        self.logger = logger
        origin = now
        write(header.encode())
    }

    /// The header for a controller: now, the input's name, where it sends.
    package static func header(input: String, receiver: String, session: String, rate: Double) -> RecordHeader {
        RecordHeader(kind: .drive, startUnixMillis: WallClock.unixMillis(), input: input, receiver: receiver,
                     session: session, rate: rate)
    }

    /// A state went out at `at`.
    package func sent(_ state: ControllerState, at: ContinuousClock.Instant) {
        record(.state(angle: state.angle, buttons: state.buttons.rawValue), at: at)
    }

    /// The controller stopped: the `end` entry, and the file is closed.
    package func end(_ reason: EndReason, at: ContinuousClock.Instant = .now) {
        record(.end(reason: Self.describe(reason)), at: at)
        file?.close()
        file = nil
    }

    static func describe(_ reason: EndReason) -> String {
        switch reason {
        case .endOfInput: "end of input"
        case .scriptFinished: "finished"
        case .quit: "quit"
        case .signal(let s): "signal \(s)"
        case .deviceLost(let why): "device lost: \(why)"
        case .refused(let why): "refused: \(why)"
        }
    }

    /// Times in a recording never decrease (Protocol.md §10; the reader refuses a file where they
    /// do). The loop sends a state, stamped when it went out, before it serves the companions with
    /// the wake-up's earlier `now`: an entry is stamped no earlier than the one before it.
    private var lastMicros: Int64 = 0

    func record(_ event: RecordEvent, at: ContinuousClock.Instant) {
        let micros = max(lastMicros, (at - origin).microseconds)
        lastMicros = micros
        write(RecordLine.encode(RecordEntry(micros: micros, event: event)))
    }

    private func write(_ line: String) {
        guard let file else { return }
        do {
            try file.append(line)
            lines += 1
        } catch {
            logger.warning("--record \(path): \(error.reason); the drive goes on, no longer recorded")
            file.close()
            self.file = nil
        }
    }

    // MARK: SendLoopCompanion

    package var descriptor: Int32? { nil }
    package var nextDeadline: ContinuousClock.Instant? { nil }
    package var allowsStates: Bool { true }
    package var statusParts: [String] { file == nil ? [] : ["rec"] }

    /// After every wake-up: a changed robot report or link measurement becomes an entry.
    package func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
        guard let session else { return [] }
        // The fields, in order: sensor1…sensor4, switch, temperature, humidity (RobotSensors.fields).
        if let v = session.feedback.sensors?.fields.map(\.value), v != lastSensors, v.count == 7 {
            lastSensors = v
            record(.sensors(SensorValues(sensors: v[0..<4].map { UInt8(clamping: $0) }, switchValue: UInt8(clamping: v[4]),
                                         temperature: Int8(clamping: v[5]), humidity: UInt8(clamping: v[6]))), at: now)
        }
        if let report = session.feedback.report, report.state != lastReport {
            lastReport = report.state
            record(.robot(state: report.state.name, detail: Self.detail(report.state)), at: now)
        }
        let link = (session.quality.lastRoundTrip, session.quality.lossRate)
        if link.0 != lastLink.0 || link.1 != lastLink.1 {
            lastLink = link
            record(.link(roundTripMillis: link.0.map { Double($0.microseconds) / 1000 }, loss: link.1), at: now)
        }
        return []
    }

    package func finish(socket: UDPSocket?, peer: SocketAddress?) {}

    static func detail(_ state: RobotReport.State) -> String {
        switch state {
        case .failsafe(let cause): cause.name
        case .owned(let by): by.text
        case .refused(_, let text), .boardMissing(let text): text.text
        case .driving, .teacherStop, .free: ""
        }
    }
}

extension Duration {
    /// Whole microseconds (rounded toward zero).
    var microseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000 + atto / 1_000_000_000_000
    }
}
