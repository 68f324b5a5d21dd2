import RemoteWire

/// How a pad's controls become a ``ControllerState``: a pure value, no SDL, no state between
/// calls. The stateful rules (stop latch, resume after neutral, hot-plug) are in
/// ``GamepadSession``.
///
/// Defaults (``standard``): left stick X → angle (full deflection = ±π/4, deadzone 0.05 with
/// rescaling, no expo); forward = d-pad up or right trigger past half; backward = d-pad down or
/// left trigger past half; south → a, east → b, west → x, north → y, shoulders → l/r,
/// start → start, back → select, guide → home, stick clicks → l3/r3, d-pad left/right →
/// left/right. No enable (deadman) and no stop button.
package struct GamepadMapping: Hashable, Sendable {
    /// Which stick axis steers (a trigger cannot).
    package var steerAxis: PadAxis = .leftX
    /// Negates the angle (stick right → turn left).
    package var invertSteer = false
    /// The angle sent at full deflection, radians, 0 < angle ≤ π/2. Default: the binary32
    /// nearest π/4 (`Float(Double.pi / 4)`; `Float.pi / 4` is one ulp short).
    package var fullLockAngle = Float(Double.pi / 4)
    /// Stick readings with magnitude ≤ this are 0; outside, the rest of the travel is rescaled
    /// to 0…1, so the output is continuous (0 just outside the deadzone, 1 at full deflection).
    /// 0 ≤ deadzone < 1; ROS `joy`'s default 0.05.
    package var deadzone = 0.05
    /// Blend of linear and cubic response after the deadzone: y = (1−e)·x + e·x³, 0 ≤ e ≤ 1.
    /// 0 = linear; higher = finer control near the centre, same full-lock at the end.
    package var expo = 0.0
    /// Triggers and sticks bound to a bit count as held strictly past this (0 < t < 1).
    package var threshold = 0.5
    /// Packet bit ← controls (any one active sets the bit). Bits not listed are never set.
    package var bindings: [Binding]
    /// Optional deadman: while it is not held the output is the neutral state.
    package var enable: PadControl?
    /// Optional stop button (see ``GamepadSession`` for the latch).
    package var stop: PadControl?

    package struct Binding: Hashable, Sendable {
        package var bit: Buttons
        package var controls: [PadControl]
        package init(_ bit: Buttons, _ controls: [PadControl]) {
            self.bit = bit
            self.controls = controls
        }
    }

    package init(bindings: [Binding] = GamepadMapping.standardBindings) {
        self.bindings = bindings
    }

    package static let standard = GamepadMapping()

    package static let standardBindings: [Binding] = [
        Binding(.forward, [.button(.dpadUp), .trigger(.rightTrigger)]),
        Binding(.backward, [.button(.dpadDown), .trigger(.leftTrigger)]),
        Binding(.a, [.button(.south)]),
        Binding(.b, [.button(.east)]),
        Binding(.x, [.button(.west)]),
        Binding(.y, [.button(.north)]),
        Binding(.l, [.button(.leftShoulder)]),
        Binding(.r, [.button(.rightShoulder)]),
        Binding(.start, [.button(.start)]),
        Binding(.select, [.button(.back)]),
        Binding(.home, [.button(.guide)]),
        Binding(.l3, [.button(.leftStick)]),
        Binding(.r3, [.button(.rightStick)]),
        Binding(.left, [.button(.dpadLeft)]),
        Binding(.right, [.button(.dpadRight)]),
    ]

    /// The controls bound to `bit` (empty if none).
    package func controls(for bit: Buttons) -> [PadControl] {
        bindings.first { $0.bit == bit }?.controls ?? []
    }

    /// Maps one reading. The enable and stop controls are consumed: a control used as one of
    /// them never also sets its packet bit (holding a shoulder as deadman does not send `l`).
    package func map(_ snapshot: PadSnapshot) -> MappedInput {
        var buttons: Buttons = []
        for binding in bindings {
            for control in binding.controls where control != enable && control != stop {
                if control.isActive(in: snapshot, threshold: threshold) {
                    buttons.insert(binding.bit)
                    break
                }
            }
        }
        let raw = snapshot[steerAxis]
        let shaped = Self.shape(raw, deadzone: deadzone, expo: expo)
        var angle = Float((invertSteer ? -shaped : shaped) * Double(fullLockAngle))
        if angle == 0 { angle = 0 }   // never −0: a centred stick sends 00 00 00 00
        return MappedInput(
            state: ControllerState(angle: angle, buttons: buttons),
            steeringCentred: raw.magnitude <= max(deadzone, Self.minimumCentreBand),
            enableHeld: enable.map { $0.isActive(in: snapshot, threshold: threshold) },
            stopHeld: stop?.isActive(in: snapshot, threshold: threshold) ?? false)
    }

    /// A stick counts as centred for "resume after neutral" within the deadzone, or within this
    /// band when the deadzone is smaller (a deadzone of 0 must not make resuming impossible
    /// with a stick that rests a hair off zero).
    package static let minimumCentreBand = 0.05

    /// Deadzone with rescaling, then expo; `value` is clamped to −1…1, the result is in −1…1 and
    /// is exactly ±1 at full deflection.
    package static func shape(_ value: Double, deadzone: Double, expo: Double) -> Double {
        guard value.isFinite else { return 0 }
        let clamped = min(1, max(-1, value))
        let magnitude = clamped.magnitude
        guard magnitude > deadzone else { return 0 }
        let r = min(1, (magnitude - deadzone) / (1 - deadzone))
        let y = (1 - expo) * r + expo * r * r * r
        return clamped < 0 ? -y : y
    }
}

/// What one pad reading means, before the stateful rules (deadman, stop latch, resume after
/// neutral) are applied by ``GamepadSession``.
package struct MappedInput: Hashable, Sendable {
    /// The state the pad asks for.
    package var state: ControllerState
    /// The steering stick is inside the deadzone (or the minimum centre band).
    package var steeringCentred: Bool
    /// nil when no enable button is configured.
    package var enableHeld: Bool?
    /// false when no stop button is configured.
    package var stopHeld: Bool

    package init(state: ControllerState, steeringCentred: Bool, enableHeld: Bool? = nil, stopHeld: Bool = false) {
        self.state = state
        self.steeringCentred = steeringCentred
        self.enableHeld = enableHeld
        self.stopHeld = stopHeld
    }

    /// Safe to resume from: no drive bit (forward/backward) and the stick centred. Other
    /// buttons (a, b, …) do not move the robot and do not matter.
    package var isNeutral: Bool { state.isDriveNeutral && steeringCentred }
}
