import RemoteWire

/// The keyboard controller as a value-type state machine: terminal events and the time in, the
/// controller state out. No I/O; ``KeyboardSource`` feeds it.
///
/// Keys (case-insensitive):
/// - ← / → steer: each press and each auto-repeat moves the tilt one step towards full lock
///   (``Timing/fullLock``, the receiver's steering saturation, Protocol.md §3.4: π/4 by
///   default), so ``Timing/stepsToFullLock`` presses reach it and none is wasted beyond it. With
///   ``Steering/centre`` (the default) the tilt returns to 0 when the key is released; with
///   ``Steering/latch`` it stays until centred.
/// - `-` / `+` (also `[` / `]`): tilt scale, 25 … 100 % of full lock, in steps of 25 %.
/// - space: stop — centre and release every held key (the neutral state). `0`: centre only.
/// - `W` or ↑ = forward, `S` or ↓ = backward, `A` = button A, `B` = button B: held while the key
///   is held (see below).
/// - Ctrl-Z: suspend (the loop sends neutral, gives the terminal back and stops the process).
/// - `q`, Ctrl-C, Ctrl-D, Ctrl-\ quit.
///
/// "Held" — terminals send no key-up in their legacy encoding, so:
/// - Without release events, a hold key (also ←/→ when steering returns to centre) counts as
///   held for ``Timing/firstHold`` after its first press (longer than the usual auto-repeat
///   delay, so it lasts until the first repeat), and for ``Timing/repeatHold`` after each repeat
///   (several repeat intervals, so a late repeat does not drop it). It is released when that
///   time passes without a repeat.
/// - With the kitty keyboard protocol's event types (the terminal answered the query with flag 2
///   set, or sent a release event), a hold key is held from its press until its release event,
///   with no timeout.
/// - Losing focus (`CSI O`) releases every hold key in both modes: a release that happens in
///   another window is never reported. A latched tilt stays.
package struct KeyboardModel: Sendable {
    package enum Steering: String, Sendable, CaseIterable {
        /// Releasing ←/→ returns the tilt to 0 (a steering wheel that springs back).
        case centre
        /// The tilt stays where the presses left it (centre with `0` or space).
        case latch
    }

    package struct Timing: Sendable, Hashable {
        /// How long a hold key counts as held after its first press, without release events.
        package var firstHold: Duration = .milliseconds(700)
        /// How long after each auto-repeat, without release events.
        package var repeatHold: Duration = .milliseconds(200)
        /// The tilt of full lock in radians: the kit mapping's `drive.full_lock` (binary32 π/4).
        package var fullLock: Double = 0.7853982
        /// Presses of ←/→ from centre to full lock at a 100 % tilt scale.
        package var stepsToFullLock = 4

        package init() {}
    }

    package enum Outcome: Equatable, Sendable {
        case none
        case quit
        /// Ctrl-Z: the person asks to suspend the controller (the terminal is raw, so no SIGTSTP).
        case suspend
        /// Release events were detected: from now on keys are held until released.
        case releaseEventsDetected
    }

    enum HoldKey: Hashable, Sendable, CaseIterable {
        case forward, backward, a, b
        var button: Buttons {
            switch self {
            case .forward: .forward
            case .backward: .backward
            case .a: .a
            case .b: .b
            }
        }
    }

    package let timing: Timing
    package let steering: Steering
    /// Tilt in steps of full lock / ``Timing/stepsToFullLock`` (positive = right).
    package private(set) var tiltSteps = 0
    /// The tilt scale in steps of 25 % of full lock, 1…4.
    package private(set) var scaleQuarters = 4
    /// Held keys and when each lapses (nil = until its release event).
    private var held: [HoldKey: ContinuousClock.Instant?] = [:]
    /// With ``Steering/centre``: the steering key held and when it lapses (nil = until released).
    private var steer: (direction: Int, until: ContinuousClock.Instant?)?
    /// True once the terminal is known to report key releases.
    package private(set) var releaseEvents = false

    package init(timing: Timing = Timing(), steering: Steering = .centre) {
        self.timing = timing
        self.steering = steering
    }

    /// The angle one step is worth at the current scale.
    package var stepAngle: Double { timing.fullLock * Double(scaleQuarters) / 4 / Double(timing.stepsToFullLock) }

    package var state: ControllerState {
        let raw = Float(Double(tiltSteps) * stepAngle)
        let angle = min(max(raw, -ControllerState.maxAngle), ControllerState.maxAngle)
        let buttons = held.keys.reduce(into: Buttons()) { $0.formUnion($1.button) }
        return ControllerState(angle: angle, buttons: buttons)
    }

    /// When the earliest held key lapses (nil = none will).
    package var nextDeadline: ContinuousClock.Instant? {
        (held.values.compactMap { $0 } + [steer?.until].compactMap { $0 }).min()
    }

    package mutating func handle(_ event: TerminalEvent, now: ContinuousClock.Instant) -> Outcome {
        switch event {
        case .focus(let gained):
            if !gained {
                held.removeAll()
                if steer != nil { centreSteering() }
            }
            return .none
        case .keyboardFlags(let flags):
            return flags & 2 != 0 ? detectReleaseEvents() : .none
        case .key(let key, let action, let mods):
            var outcome = Outcome.none
            if action == .release, !releaseEvents { outcome = detectReleaseEvents() }
            if mods.contains(.ctrl) {
                if action == .press, case .character(let c) = key {
                    let lower = c.properties.lowercaseMapping
                    if ["c", "d", "\\"].contains(lower) { return .quit }
                    if lower == "z" { return .suspend }
                }
                return outcome
            }
            switch Self.meaning(of: key) {
            case .hold(let k):
                switch action {
                case .release:
                    held[k] = nil
                case .press, .repeat:
                    held[k] = holdUntil(alreadyHeld: held[k] != nil, now: now)
                }
            case .tilt(let direction):
                steerKey(direction, action: action, now: now)
            case .scale(let delta) where action != .release:
                scaleQuarters = min(max(scaleQuarters + delta, 1), 4)
            case .centre where action == .press:
                centreSteering()
            case .stop where action == .press:
                releaseAll()
            case .quit where action == .press:
                return .quit
            default:
                break
            }
            return outcome
        }
    }

    /// Releases every hold key whose time has passed (a lapsed steering key centres).
    package mutating func expire(now: ContinuousClock.Instant) {
        for (key, deadline) in held {
            if let deadline, deadline <= now { held[key] = nil }
        }
        if let until = steer?.until, until <= now { centreSteering() }
    }

    /// Back to the neutral state: every key released, the tilt centred (stop key, resume).
    package mutating func releaseAll() {
        held.removeAll()
        centreSteering()
    }

    private mutating func centreSteering() {
        steer = nil
        tiltSteps = 0
    }

    private func holdUntil(alreadyHeld: Bool, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        if releaseEvents { return nil }
        return now + (alreadyHeld ? timing.repeatHold : timing.firstHold)
    }

    private mutating func steerKey(_ direction: Int, action: KeyAction, now: ContinuousClock.Instant) {
        let limit = timing.stepsToFullLock
        switch steering {
        case .latch:
            guard action != .release else { return }
            tiltSteps = min(max(tiltSteps + direction, -limit), limit)
        case .centre:
            if action == .release {
                if steer?.direction == direction { centreSteering() }
                return
            }
            let same = steer?.direction == direction
            // Turning the other way starts from centre, as a wheel that springs back would.
            tiltSteps = same ? min(max(tiltSteps + direction, -limit), limit) : direction
            steer = (direction, holdUntil(alreadyHeld: same, now: now))
        }
    }

    private mutating func detectReleaseEvents() -> Outcome {
        guard !releaseEvents else { return .none }
        releaseEvents = true
        for key in held.keys { held[key] = .some(nil) }
        if let s = steer { steer = (s.direction, nil) }
        return .releaseEventsDetected
    }

    enum Meaning: Equatable {
        case hold(HoldKey), tilt(Int), scale(Int), centre, stop, quit, none
    }

    static func meaning(of key: Key) -> Meaning {
        switch key {
        case .up: return .hold(.forward)
        case .down: return .hold(.backward)
        case .left: return .tilt(-1)
        case .right: return .tilt(1)
        case .escape, .other: return .none
        case .character(let c):
            switch c.properties.lowercaseMapping {
            case "w": return .hold(.forward)
            case "s": return .hold(.backward)
            case "a": return .hold(.a)
            case "b": return .hold(.b)
            case " ": return .stop
            case "0": return .centre
            case "-", "[": return .scale(-1)
            case "+", "=", "]": return .scale(1)
            case "q": return .quit
            default: return .none
            }
        }
    }
}
