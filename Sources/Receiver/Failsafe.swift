import SystemIO

/// When the motors may run: a value-type state machine with the time passed in.
///
/// ```
///            resting state from the owner
///  ┌──────────────────┐ ───────────────────────▶ ┌─────────┐
///  │ waitingForNeutral│                          │ driving │
///  │   (reason)       │ ◀─────────────────────── └─────────┘
///  └──────────────────┘  silent ≥ timeout, board reconnected/lost, stop()
/// ```
/// It starts in ``State/waitingForNeutral(_:)`` (``Reason/startup``): like an RC model that
/// will not arm with the throttle up, the robot moves only after a resting state (no drive
/// button, tilt inside the deadzone — the caller decides, see ``Mapping/isResting(_:)``).
/// Tripping returns true exactly once, and the caller then writes the stop values (motors 0).
/// While waiting, states are *held*: none reaches the board, but they still prove the
/// controller is alive (ownership keeps it).
package struct Failsafe: Sendable {
    package enum Reason: String, Sendable, Equatable {
        /// Nothing has driven yet since start-up.
        case startup
        /// The driving controller went quiet for the failsafe timeout.
        case silence
        /// The board link dropped, or came back: its state is unknown, start from rest.
        case boardLink
        /// The driving controller said bye (Protocol.md §7.4): the robot is free at once.
        case released
        /// A teacher's stop-all (Protocol.md §7.6); after the release, rest first.
        case teacher
        /// The mapping changed (`systemctl reload`): start from rest with the new one.
        case reloaded
    }

    package enum State: Sendable, Equatable {
        case waitingForNeutral(Reason)
        /// Driving; `lastState` is when the last applied state arrived.
        case driving(lastState: Tick)
    }

    package enum Verdict: Sendable, Equatable {
        /// Apply the state (the robot was already driving).
        case drive
        /// Apply the state: it was resting, so the failsafe is lifted from now on.
        case resume
        /// Do not apply: the failsafe is on and this state would move the robot.
        case hold
    }

    package let timeout: Duration
    /// ``timeout`` in nanoseconds (the time the state machine works in, see ``Tick``).
    package let timeoutNanoseconds: Int64
    package private(set) var state: State = .waitingForNeutral(.startup)

    package init(timeout: Duration) {
        self.timeout = timeout
        timeoutNanoseconds = Tick.nanoseconds(timeout)
    }

    package var isDriving: Bool {
        if case .driving = state { return true }
        return false
    }

    /// When the failsafe trips unless another state arrives; nil while already tripped.
    package var deadlineTick: Tick? {
        if case .driving(let last) = state { return last + timeoutNanoseconds }
        return nil
    }

    /// ``deadlineTick`` as an instant.
    package var deadline: ContinuousClock.Instant? { deadlineTick?.instant }

    /// Trips on silence. Returns true when it has just tripped (write the stop values now).
    package mutating func tick(at now: Tick) -> Bool {
        guard let deadline = deadlineTick, now >= deadline else { return false }
        state = .waitingForNeutral(.silence)
        return true
    }

    package mutating func tick(at now: ContinuousClock.Instant) -> Bool { tick(at: Tick(now)) }

    package mutating func state(resting: Bool, at now: ContinuousClock.Instant) -> Verdict {
        state(resting: resting, at: Tick(now))
    }

    /// A valid state from the controller that may drive (the owner) at `now`.
    /// `resting`: the state would not move the robot.
    package mutating func state(resting: Bool, at now: Tick) -> Verdict {
        _ = tick(at: now)
        switch state {
        case .driving(let last):
            state = .driving(lastState: max(last, now))   // arrival stamps may tie or step back
            return .drive
        case .waitingForNeutral:
            guard resting else { return .hold }
            state = .driving(lastState: now)
            return .resume
        }
    }

    /// Trips for `reason` (board link events, shutdown). Returns true if it was driving.
    @discardableResult
    package mutating func trip(_ reason: Reason) -> Bool {
        let was = isDriving
        state = .waitingForNeutral(reason)
        return was
    }
}
