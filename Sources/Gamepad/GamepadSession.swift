import RemoteWire

/// The safety rules between a pad and the wire: hot-plug, resume-after-neutral, deadman, and
/// the stop latch. A value type fed with events and the time; it returns what to send and
/// show. The SDL loop (``GamepadSource``) does the I/O; tests drive it with made-up instants.
///
/// Contract:
/// - No pad (never plugged, unplugged, or none matches the selector): the output is the
///   neutral state at once, the status says "no gamepad", and it waits. It never gives up.
/// - A pad is (re)connected: the output stays neutral until the pad gives a neutral input —
///   no forward/backward and the steering stick centred (``MappedInput/isNeutral``). From that
///   neutral input on, it drives. So replugging a pad with the trigger held never lurches.
/// - Enable (deadman), if configured: while it is not held the output is neutral. Holding it
///   again drives at once (it is a deliberate hold-to-run, as in ROS `teleop_twist_joy`).
/// - Stop, if configured: a press sends neutral at once and latches. The latch holds through
///   the release of that press and through a second press; it clears when the stop control is
///   released the second time ("released twice"). After it clears, the resume-after-neutral
///   rule applies again. The latch survives unplugging (a new pad does not clear a stop). A
///   stop control already held when a pad is opened counts as a press.
/// - While waiting for a pad, a reminder notice every ``reminderInterval``.
package struct GamepadSession: Sendable {
    package enum Event: Hashable, Sendable {
        /// The selected pad was opened; `input` is its reading at that moment.
        case connected(PadInfo, MappedInput)
        /// The open pad went away.
        case disconnected
        /// A new reading of the open pad (send only on change).
        case input(MappedInput)
        /// No pad is open, and this is why (sent when the reason changes).
        case unavailable(GamepadSelector.Miss)
        /// Time passed (at or after ``nextDeadline``).
        case tick
    }

    package let selector: GamepadSelector
    package let enable: PadControl?
    package let stop: PadControl?
    package let reminderInterval: Duration

    package private(set) var pad: PadInfo?
    package private(set) var output: ControllerState = .neutral
    package private(set) var status: GamepadStatus
    /// When a ``Event/tick`` is due (nil = nothing timed is pending).
    package private(set) var nextDeadline: ContinuousClock.Instant?

    private var miss: GamepadSelector.Miss = .nothingConnected
    private var waitingSince: ContinuousClock.Instant?
    private var input: MappedInput?
    private var needsNeutral = true
    private var latchReleases: Int?   // nil = not latched; else releases seen since the press
    private var stopHeld = false
    private var started = false
    private var announcedWait = false

    package init(selector: GamepadSelector, mapping: GamepadMapping, reminderInterval: Duration = .seconds(30)) {
        self.selector = selector
        self.enable = mapping.enable
        self.stop = mapping.stop
        self.reminderInterval = reminderInterval
        self.status = .noGamepad(selector, .nothingConnected)
    }

    /// Starts with no pad: the neutral state, the waiting status and a notice. (Optional: the
    /// first ``handle(_:at:)`` starts the session too, without the notice if a pad is there.)
    package mutating func start(at now: ContinuousClock.Instant) -> [GamepadEvent] {
        var events = begin(at: now)
        if pad == nil && !announcedWait {
            announcedWait = true
            events.append(.notice(waitingNotice))
        }
        return events
    }

    private mutating func begin(at now: ContinuousClock.Instant) -> [GamepadEvent] {
        guard !started else { return [] }
        started = true
        beginWaiting(at: now)
        return [.state(.neutral), .status(status)]
    }

    private var waitingNotice: String {
        "waiting for a gamepad (\(selector)); plug one in — `analog-remote gamepads` lists what SDL sees"
    }

    package mutating func handle(_ event: Event, at now: ContinuousClock.Instant) -> [GamepadEvent] {
        var actions = begin(at: now)
        var notices: [String] = []
        switch event {
        case .connected(let info, let reading):
            if let old = pad, old.instanceID != info.instanceID {
                notices.append("gamepad switched: \(old) → \(info)")
            }
            pad = info
            input = nil
            needsNeutral = true
            stopHeld = false
            waitingSince = nil
            nextDeadline = nil
            notices.append("gamepad connected: \(info), GUID \(info.guid)")
            notices += take(reading)
        case .disconnected:
            if let old = pad {
                notices.append("gamepad lost: \(old); sending neutral, waiting for a gamepad")
                announcedWait = true
                pad = nil
                input = nil
                stopHeld = false
                miss = .nothingConnected
                beginWaiting(at: now)
            }
        case .input(let reading):
            if pad != nil { notices += take(reading) }
        case .unavailable(let why):
            if pad == nil, why != miss {
                miss = why
                if why != .nothingConnected { notices.append("\(GamepadStatus.noGamepad(selector, why))") }
            }
        case .tick:
            if let since = waitingSince, let due = nextDeadline, now >= due {
                notices.append("still no gamepad after \(Self.seconds(now - since)) s: \(GamepadStatus.noGamepad(selector, miss))")
                nextDeadline = due + reminderInterval
                while let next = nextDeadline, next <= now { nextDeadline = next + reminderInterval }
            }
        }
        if pad == nil && !announcedWait {
            announcedWait = true
            notices.insert(waitingNotice, at: 0)
        }
        let (newOutput, newStatus) = evaluate()
        if newOutput != output {
            output = newOutput
            actions.removeAll { if case .state = $0 { true } else { false } }
            actions.insert(.state(newOutput), at: 0)
        }
        if newStatus != status {
            status = newStatus
            actions.removeAll { if case .status = $0 { true } else { false } }
            actions.append(.status(newStatus))
        }
        return actions + notices.map(GamepadEvent.notice)
    }

    private mutating func beginWaiting(at now: ContinuousClock.Instant) {
        waitingSince = now
        nextDeadline = now + reminderInterval
    }

    /// Records a reading; runs the stop latch's edge logic. Returns notices.
    private mutating func take(_ reading: MappedInput) -> [String] {
        var notices: [String] = []
        if reading.stopHeld && !stopHeld, latchReleases == nil {
            latchReleases = 0
            notices.append("stop pressed: neutral, latched until \(stop?.name ?? "stop") is released twice")
        }
        if !reading.stopHeld && stopHeld, let released = latchReleases {
            if released + 1 >= 2 {
                latchReleases = nil
                needsNeutral = true
                notices.append("stop released twice: resuming after a neutral input")
            } else {
                latchReleases = released + 1
            }
        }
        stopHeld = reading.stopHeld
        input = reading
        return notices
    }

    private mutating func evaluate() -> (ControllerState, GamepadStatus) {
        guard let pad else { return (.neutral, .noGamepad(selector, miss)) }
        if let released = latchReleases {
            return (.neutral, .stopped(pad, stop: stop, releasesLeft: 2 - released))
        }
        guard let input else { return (.neutral, .waitingForNeutral(pad)) }
        if needsNeutral {
            guard input.isNeutral else { return (.neutral, .waitingForNeutral(pad)) }
            needsNeutral = false
        }
        if input.enableHeld == false, let enable {
            return (.neutral, .enableNotHeld(pad, enable: enable))
        }
        return (input.state, .driving(pad))
    }

    static func seconds(_ d: Duration) -> Int64 { d.components.seconds }
}

/// What a gamepad input yields: the state to send, the status line, log lines.
package enum GamepadEvent: Hashable, Sendable {
    /// The state to put on the wire now (emitted only when it changed).
    case state(ControllerState)
    /// The new status (emitted only when it changed); its description is the status text.
    case status(GamepadStatus)
    /// A line for the log: pad connected, lost, stop latched, still waiting.
    case notice(String)
}

/// What the gamepad input is doing, for the status line.
package enum GamepadStatus: Hashable, Sendable {
    case noGamepad(GamepadSelector, GamepadSelector.Miss)
    case waitingForNeutral(PadInfo)
    case driving(PadInfo)
    case enableNotHeld(PadInfo, enable: PadControl)
    case stopped(PadInfo, stop: PadControl?, releasesLeft: Int)

    /// True when the pad's input goes on the wire (the others send neutral).
    package var isDriving: Bool { if case .driving = self { true } else { false } }
}

extension GamepadStatus: CustomStringConvertible {
    package var description: String {
        switch self {
        case .noGamepad(let selector, .nothingConnected):
            return "no gamepad — waiting for one (\(selector))"
        case .noGamepad(let selector, .noMatch(let connected)):
            return "no gamepad — none matches \(selector) (connected: \(connected.map(\.description).joined(separator: ", ")))"
        case .noGamepad(_, .noMapping(let pad)):
            return "no gamepad — \(pad) has no SDL mapping (add one under gamepad.mappings in --config, or SDL_GAMECONTROLLERCONFIG)"
        case .noGamepad(_, .cannotOpen(let pad, let reason)):
            return "no gamepad — \(pad) cannot be opened: \(reason)"
        case .waitingForNeutral(let pad):
            return "gamepad \(pad): centre the stick and release forward/backward to start"
        case .driving(let pad):
            return "gamepad \(pad)"
        case .enableNotHeld(let pad, let enable):
            return "gamepad \(pad): hold \(enable.name) to drive"
        case .stopped(let pad, let stop, let left):
            let name = stop?.name ?? "stop"
            return left >= 2
                ? "gamepad \(pad): STOPPED — release \(name), then press and release it again to resume"
                : "gamepad \(pad): STOPPED — press and release \(name) to resume"
        }
    }
}
