#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import DriveRecord
import RemoteWire
import SystemIO

/// How to play a recording back: `--speed`, `--loop`, `--from`, `--to`.
package struct ReplayOptions: Equatable, Sendable {
    /// 2 = twice as fast (intervals halved).
    package var speed: Double = 1
    /// Times through the cut, one after the other.
    package var loops: Int = 1
    /// Seconds into the recording to start at (the state in effect then is the first sent).
    package var from: Double?
    /// Seconds into the recording to stop at.
    package var to: Double?

    package static let speedRange = 0.25...4.0
    package static let loopRange = 1...1000

    package init(speed: Double = 1, loops: Int = 1, from: Double? = nil, to: Double? = nil) {
        self.speed = speed
        self.loops = loops
        self.from = from
        self.to = to
    }
}

/// The states of a recording as a timetable: the cut (`from`…`to`), shifted to start at 0 and
/// divided by the speed. Pure; ``ReplaySource`` plays it against the clock.
package struct ReplayPlan: Equatable, Sendable {
    package struct Step: Equatable, Sendable {
        /// From the start of one pass.
        package let at: Duration
        package let state: ControllerState
    }

    /// One pass.
    package let steps: [Step]
    /// How long one pass lasts (the cut's length at this speed): pass k starts at k × period.
    package let period: Duration
    package let loops: Int
    /// Neutral before the first state when that one would move the robot: a fresh receiver
    /// waits for a resting state (Protocol.md §3.3), so a cut that starts while driving would
    /// otherwise be held. Once, before the first pass.
    package let leadIn: Duration
    package static let standardLeadIn: Duration = .milliseconds(200)

    /// Fails with the reason when the cut holds no state.
    package init(_ recording: Recording, options: ReplayOptions) throws(RecordProblem) {
        // `--from 1e300` is finite and positive, so it passes the option checks; `Int64(_:)` would trap.
        func micros(_ seconds: Double) -> Int64 {
            let m = (seconds * 1_000_000).rounded()
            return m >= 9e18 ? Int64.max : m <= -9e18 ? Int64.min : Int64(m)
        }
        let from = max(0, micros(options.from ?? 0))
        let to = options.to.map(micros) ?? Int64.max
        var cut: [(micros: Int64, state: ControllerState)] = []
        var before: ControllerState?
        var lastState: Int64 = 0
        for entry in recording.entries {
            guard case .state(let angle, let bits) = entry.event else { continue }
            lastState = entry.micros
            // Bits the wire does not define are dropped, as the receiver would (Protocol.md §2).
            let state = ControllerState(angle: angle, buttons: Buttons(rawValue: bits).intersection(.defined))
            if entry.micros < from { before = state; continue }
            if entry.micros > to { continue }
            cut.append((entry.micros - from, state))
        }
        if let before, cut.first?.micros != 0, from <= lastState { cut.insert((0, before), at: 0) }

        guard let last = cut.last else {
            let window = "\(RecordNumber.plain(options.from ?? 0, places: 3))…\(options.to.map { RecordNumber.plain($0, places: 3) } ?? "end") s"
            throw RecordProblem(line: 0, reason: "no state to replay in \(window) (the recording's states span \(RecordNumber.plain(recording.duration, places: 3)) s)")
        }
        let scale = 1 / options.speed
        func scaled(_ micros: Int64) -> Duration { .microseconds(Int64((Double(micros) * scale).rounded())) }
        steps = cut.map { Step(at: scaled($0.micros), state: $0.state) }
        // A pass lasts the cut: up to --to, or to the last state when the recording ends sooner.
        period = scaled(max(min(to, lastState) - from, last.micros, 0))
        loops = options.loops
        leadIn = steps[0].state == .neutral ? .zero : Self.standardLeadIn
    }

    /// When step `index` of pass `pass` is due, from the start of the replay.
    package func time(pass: Int, index: Int) -> Duration { leadIn + period * pass + steps[index].at }

    package var total: Duration { leadIn + period * (loops - 1) + (steps.last?.at ?? .zero) }
}

/// Reading a recording for `--input replay:FILE`: every failure is one line naming the file
/// (and the line), exit status 2.
package enum RecordingFile {
    package static func load(path: String, verb: String = "replay") throws(CommandFailure) -> Recording {
        let bytes: [UInt8]
        do {
            bytes = try FileContents.read(path: path, limit: Recording.maximumFileSize)
        } catch {
            let why = error.errno == EFBIG ? "larger than \(Recording.maximumFileSize >> 20) MiB: is this a recording?" : error.reason
            throw CommandFailure("\(verb) \(path): \(why)", kind: .badConfiguration)
        }
        do {
            return try Recording.decode(bytes)
        } catch {
            throw problem(path, error, verb: verb)
        }
    }

    package static func problem(_ path: String, _ p: RecordProblem, verb: String = "replay") -> CommandFailure {
        CommandFailure("\(verb) \(p.located(in: path))", kind: .badConfiguration)
    }
}
