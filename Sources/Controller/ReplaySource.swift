#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RemoteWire

/// `--input replay:FILE`: plays a ``ReplayPlan`` — each state at its time, pass after pass —
/// then `.end(.scriptFinished)`, after which the loop sends neutral ×3 as for any input.
///
/// On a terminal it first sends neutral and asks for the robot to be put at the start: Enter
/// begins a 3-second countdown (shown above the status line), Ctrl-C cancels as always. Without a
/// terminal (a script, a test) it starts at once.
package final class ReplaySource: InputSource {
    package let name: String
    package let plan: ReplayPlan
    private let prompt: Bool
    private let notices: [String]
    private let input: Int32

    enum Phase: Equatable {
        case waiting
        case countdown(left: Int, next: ContinuousClock.Instant)
        case playing(origin: ContinuousClock.Instant, pass: Int, index: Int)
        case done
    }
    private(set) var phase = Phase.waiting

    /// The countdown's length in seconds, after Enter.
    package static let countdown = 3

    /// `notices` are printed at the start (a cut-short last line's warning).
    package init(plan: ReplayPlan, name: String, prompt: Bool, notices: [String] = [], input: Int32 = STDIN_FILENO) {
        self.plan = plan
        self.name = name
        self.prompt = prompt
        self.notices = notices
        self.input = input
    }

    package var descriptor: Int32? { phase == .waiting ? input : nil }

    package var nextDeadline: ContinuousClock.Instant? {
        switch phase {
        case .waiting, .done: nil
        case .countdown(_, let next): next
        case .playing(let origin, let pass, let index): origin + plan.time(pass: pass, index: index)
        }
    }

    package func start(now: ContinuousClock.Instant) -> [InputEvent] {
        var events = notices.map(InputEvent.notice) + [.state(.neutral)]
        let length = "\(Double(plan.total.components.seconds) + Double(plan.total.components.attoseconds) / 1e18)"
        if prompt {
            events.append(.notice("\(name): \(plan.steps.count) states, \(length.prefix(6)) s\(plan.loops > 1 ? " × \(plan.loops)" : ""). Place the robot at the start, then press Enter (Ctrl-C cancels)."))
            phase = .waiting
            return events
        }
        phase = .playing(origin: now, pass: 0, index: 0)
        return events + deadlinePassed(now: now)
    }

    /// Enter while waiting starts the countdown; end of input cancels.
    package func read(now: ContinuousClock.Instant) -> [InputEvent] {
        guard phase == .waiting else { return [] }
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
        if n < 0 { return errno == EINTR || errno == EAGAIN ? [] : [.end(.deviceLost("replay: the terminal: read failed"))] }
        if n == 0 { return [.end(.quit)] }
        guard buffer[..<n].contains(0x0A) else { return [] }
        phase = .countdown(left: Self.countdown, next: now + .seconds(1))
        return [.notice("\(Self.countdown)…")]
    }

    package func deadlinePassed(now: ContinuousClock.Instant) -> [InputEvent] {
        switch phase {
        case .waiting, .done:
            return []
        case .countdown(let left, let next):
            guard now >= next else { return [] }
            if left > 1 {
                phase = .countdown(left: left - 1, next: next + .seconds(1))
                return [.notice("\(left - 1)…")]
            }
            phase = .playing(origin: now, pass: 0, index: 0)
            return [.notice("go")] + deadlinePassed(now: now)
        case .playing(let origin, var pass, var index):
            var events: [InputEvent] = []
            // Every step that is due, in order (a late wake-up applies them all; the send
            // schedule sends the last at once).
            while pass < plan.loops, origin + plan.time(pass: pass, index: index) <= now {
                events.append(.state(plan.steps[index].state))
                index += 1
                if index == plan.steps.count { index = 0; pass += 1 }
            }
            if pass == plan.loops {
                phase = .done
                events.append(.end(.scriptFinished))
            } else {
                phase = .playing(origin: origin, pass: pass, index: index)
            }
            return events
        }
    }
}
