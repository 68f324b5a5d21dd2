import RemoteWire
import SystemIO

/// When the controller puts a state packet on the wire: the send cadence as a value-type state
/// machine. It takes events and the time (a ``Tick``, the loop's one clock reading per wake-up),
/// and returns what to send; the loop around it does the I/O and sleeps until ``deadline``.
///
/// Contract:
/// - ``start(now:)`` sends the current state at once (the receiver sees the controller at once).
/// - A state that differs from the last one is sent at once — unless the previous send was less
///   than ``Configuration/minimumGap`` ago; then it goes out when the gap has passed, and only the
///   latest of several such states is sent (latest wins, like `coalesce_interval_ms` in ROS joy).
///   "Differs" means different bytes on the wire: -0.0 and 0.0 are different states.
/// - While nothing changes, the full current state is sent again every ``Configuration/period``.
///   Resends keep an absolute grid, so a late wake-up does not shift the next one and the average
///   rate holds; after a stall of more than two periods the missed resends are skipped, not sent
///   in a burst. Any send restarts the period, so while running the wire is never silent for
///   more than one period (plus the loop's wake-up latency).
/// - ``stop(_:now:)`` sends a last state still waiting for the gap (if any), then the neutral
///   state ``Configuration/neutralRepeats`` times,
///   ``Configuration/neutralSpacing`` apart (a burst loss on Wi-Fi should not eat all of them), then
///   returns ``Action/finish(_:)``. The first stop reason wins; later states and stops are ignored.
package struct SendSchedule: Sendable {
    package struct Configuration: Sendable, Hashable {
        /// Time between resends of an unchanged state (1 / `--rate`).
        package var period: Duration
        /// The shortest time between two sends caused by state changes.
        package var minimumGap: Duration
        /// How many neutral packets go out on the way out.
        package var neutralRepeats: Int
        /// Time between those neutral packets (zero = all at once).
        package var neutralSpacing: Duration

        package init(period: Duration, minimumGap: Duration = .milliseconds(1),
                    neutralRepeats: Int = 3, neutralSpacing: Duration = .milliseconds(5)) {
            precondition(period > .zero, "SendSchedule needs a positive period")
            self.period = period
            self.minimumGap = min(minimumGap, period)
            self.neutralRepeats = max(1, neutralRepeats)
            self.neutralSpacing = max(.zero, neutralSpacing)
        }

        /// The configuration for `rate` packets per second (1…1000).
        package init(rate: Double) {
            self.init(period: .nanoseconds(Int64((1e9 / rate).rounded())))
        }
    }

    package enum Action: Equatable, Sendable {
        /// Send this state now.
        case send(ControllerState)
        /// Every neutral packet is out: exit for this reason.
        case finish(EndReason)
    }

    private enum Phase: Equatable, Sendable {
        case idle
        case running
        /// Neutral packets still to send, and when the next one is due.
        case stopping(EndReason, left: Int, next: Tick)
        case finished(EndReason)
    }

    package private(set) var configuration: Configuration {
        didSet { spans = Spans(configuration) }
    }
    /// The configuration's durations in nanoseconds (a `Duration` is `Int128` arithmetic).
    private var spans: Spans
    /// The state being sent (neutral once stopping).
    package private(set) var current: ControllerState
    private var phase: Phase = .idle
    private var lastSend: Tick?
    private var nextResend: Tick?
    /// A changed state waits for the minimum gap.
    private var changePending = false

    package init(_ configuration: Configuration, initial: ControllerState = .neutral) {
        self.configuration = configuration
        self.current = initial
        spans = Spans(configuration)
    }

    private struct Spans: Sendable {
        var period: Int64
        var minimumGap: Int64
        var neutralSpacing: Int64

        init(_ c: Configuration) {
            period = Tick.nanoseconds(c.period)
            minimumGap = Tick.nanoseconds(c.minimumGap)
            neutralSpacing = Tick.nanoseconds(c.neutralSpacing)
        }
    }

    /// True once ``stop(_:now:)`` was called (the loop stops reading its input then).
    package var isStopping: Bool {
        switch phase {
        case .stopping, .finished: true
        case .idle, .running: false
        }
    }

    package var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// When ``advance(now:)`` has something to do; nil = nothing until the next event.
    package var deadline: Tick? {
        switch phase {
        case .idle, .finished:
            return nil
        case .stopping(_, _, let next):
            return next
        case .running:
            if changePending, let lastSend { return lastSend + spans.minimumGap }
            return nextResend
        }
    }

    package mutating func start(now: Tick) -> [Action] {
        guard phase == .idle else { return [] }
        phase = .running
        return [send(now: now)]
    }

    /// A new state from the input. Sends it at once if it changed (see the type's contract).
    package mutating func update(_ state: ControllerState, now: Tick) -> [Action] {
        guard !isStopping, !Self.sameOnTheWire(state, current) else { return [] }
        current = state
        guard phase == .running else { return [] }   // not started: start() sends it
        if let lastSend, now - lastSend < spans.minimumGap {
            changePending = true
            return []
        }
        return [send(now: now)]
    }

    /// Sends the current state at once, e.g. because the destination changed.
    package mutating func sendNow(now: Tick) -> [Action] {
        guard phase == .running else { return [] }
        return [send(now: now)]
    }

    /// Changes the resend period from now on (the destination moved to a receiver whose timing
    /// contract asks for another one). The next resend is due at most one new period after the
    /// last send.
    package mutating func setPeriod(_ period: Duration) {
        guard period > .zero, period != configuration.period else { return }
        configuration.period = period
        configuration.minimumGap = min(configuration.minimumGap, period)
        if let lastSend, let due = nextResend, due > lastSend + spans.period { nextResend = lastSend + spans.period }
    }

    /// Begins the way out: neutral ×N, then ``Action/finish(_:)``.
    package mutating func stop(_ reason: EndReason, now: Tick) -> [Action] {
        guard !isStopping else { return [] }
        // A last state that has not been on the wire yet (waiting for the gap, or given before
        // start) goes out first, so a replay shows every final state; the neutral ones follow.
        let unsent = changePending || (phase == .idle && !Self.sameOnTheWire(current, .neutral))
        let last: [Action] = unsent ? [.send(current)] : []
        current = .neutral
        changePending = false
        phase = .stopping(reason, left: configuration.neutralRepeats, next: now)
        return last + advance(now: now)
    }

    /// Does whatever is due at `now` (call it whenever the loop wakes).
    package mutating func advance(now: Tick) -> [Action] {
        switch phase {
        case .idle, .finished:
            return []
        case .stopping(let reason, var left, var next):
            var actions: [Action] = []
            while left > 0, next <= now {
                actions.append(.send(.neutral))
                left -= 1
                next = next + spans.neutralSpacing
            }
            if left == 0 {
                phase = .finished(reason)
                actions.append(.finish(reason))
            } else {
                phase = .stopping(reason, left: left, next: next)
            }
            return actions
        case .running:
            if changePending, let lastSend, now - lastSend >= spans.minimumGap {
                return [send(now: now)]
            }
            guard let due = nextResend, now >= due else { return [] }
            lastSend = now
            changePending = false
            let next = due + spans.period
            // Keep the grid (one missed resend may follow at once); after a longer stall, skip ahead.
            nextResend = next > now + -spans.period ? next : now + spans.period
            return [.send(current)]
        }
    }

    private mutating func send(now: Tick) -> Action {
        lastSend = now
        nextResend = now + spans.period
        changePending = false
        return .send(current)
    }

    /// Equal when the 8 bytes on the wire would be equal (so -0.0 ≠ 0.0, unlike `==` on Float).
    static func sameOnTheWire(_ a: ControllerState, _ b: ControllerState) -> Bool {
        a.angle.bitPattern == b.angle.bitPattern && a.buttons == b.buttons
    }
}
