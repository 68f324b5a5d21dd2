import RemoteWire

/// The keyboard controller as a value-type state machine: terminal events and the time in, the
/// controller state out. No I/O; ``KeyboardSource`` feeds it.
///
/// Keys (case-insensitive):
/// - ← / → tilt by ``Timing/tiltStep`` per press and per auto-repeat, up to ±π/2;
///   space or `0` centres (angle 0).
/// - `W` or ↑ = forward, `S` or ↓ = backward, `A` = button A, `B` = button B: held while the key
///   is held (see below).
/// - `q`, Ctrl-C, Ctrl-D, Ctrl-\ quit.
///
/// "Held" — terminals send no key-up in their legacy encoding, so:
/// - Without release events, a hold key counts as held for ``Timing/firstHold`` after its first
///   press (longer than the usual auto-repeat delay, so it lasts until the first repeat), and for
///   ``Timing/repeatHold`` after each repeat (several repeat intervals, so a late repeat does not
///   drop it). It is released when that time passes without a repeat.
/// - With the kitty keyboard protocol's event types (the terminal answered the query with flag 2
///   set, or sent a release event), a hold key is held from its press until its release event,
///   with no timeout.
/// - Losing focus (`CSI O`) releases every hold key in both modes: a release that happens in
///   another window is never reported.
public struct KeyboardModel: Sendable {
    public struct Timing: Sendable, Hashable {
        /// How long a hold key counts as held after its first press, without release events.
        public var firstHold: Duration = .milliseconds(700)
        /// How long after each auto-repeat, without release events.
        public var repeatHold: Duration = .milliseconds(200)
        /// Radians per press of ← or →.
        public var tiltStep: Double = 0.1

        public init() {}
    }

    public enum Outcome: Equatable, Sendable {
        case none
        case quit
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

    public let timing: Timing
    /// Tilt in steps of ``Timing/tiltStep`` (positive = right).
    public private(set) var tiltSteps = 0
    /// Held keys and when each lapses (nil = until its release event).
    private var held: [HoldKey: ContinuousClock.Instant?] = [:]
    /// True once the terminal is known to report key releases.
    public private(set) var releaseEvents = false

    public init(timing: Timing = Timing()) { self.timing = timing }

    /// The largest tilt in steps: the step that reaches or passes π/2 (clamped to π/2).
    var maximumSteps: Int { Int((Double(ControllerState.maxAngle) / timing.tiltStep).rounded(.up)) }

    public var state: ControllerState {
        let raw = Float(Double(tiltSteps) * timing.tiltStep)
        let angle = min(max(raw, -ControllerState.maxAngle), ControllerState.maxAngle)
        let buttons = held.keys.reduce(into: Buttons()) { $0.formUnion($1.button) }
        return ControllerState(angle: angle, buttons: buttons)
    }

    /// When the earliest held key lapses (nil = none will).
    public var nextDeadline: ContinuousClock.Instant? {
        held.values.compactMap { $0 }.min()
    }

    public mutating func handle(_ event: TerminalEvent, now: ContinuousClock.Instant) -> Outcome {
        switch event {
        case .focus(let gained):
            if !gained { held.removeAll() }
            return .none
        case .keyboardFlags(let flags):
            return flags & 2 != 0 ? detectReleaseEvents() : .none
        case .key(let key, let action, let mods):
            var outcome = Outcome.none
            if action == .release, !releaseEvents { outcome = detectReleaseEvents() }
            if mods.contains(.ctrl) {
                if action == .press, case .character(let c) = key, ["c", "d", "\\"].contains(c.properties.lowercaseMapping) {
                    return .quit
                }
                return outcome
            }
            switch Self.meaning(of: key) {
            case .hold(let k):
                switch action {
                case .release:
                    held[k] = nil
                case .press, .repeat:
                    if releaseEvents {
                        held[k] = .some(nil)
                    } else if held[k] != nil {
                        held[k] = now + timing.repeatHold
                    } else {
                        held[k] = now + timing.firstHold
                    }
                }
            case .tilt(let direction) where action != .release:
                tiltSteps = min(max(tiltSteps + direction, -maximumSteps), maximumSteps)
            case .centre where action == .press:
                tiltSteps = 0
            case .quit where action == .press:
                return .quit
            default:
                break
            }
            return outcome
        }
    }

    /// Releases every hold key whose time has passed.
    public mutating func expire(now: ContinuousClock.Instant) {
        for (key, deadline) in held {
            if let deadline, deadline <= now { held[key] = nil }
        }
    }

    private mutating func detectReleaseEvents() -> Outcome {
        guard !releaseEvents else { return .none }
        releaseEvents = true
        for key in held.keys { held[key] = .some(nil) }
        return .releaseEventsDetected
    }

    enum Meaning: Equatable {
        case hold(HoldKey), tilt(Int), centre, quit, none
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
            case " ", "0": return .centre
            case "q": return .quit
            default: return .none
            }
        }
    }
}
