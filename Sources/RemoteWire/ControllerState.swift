/// What a controller says about itself: how far it is tilted, and which buttons are held.
public struct ControllerState: Hashable, Sendable {
    /// Tilt in radians. Positive = tilted right = turn right (clockwise seen from above); 0 = level.
    /// A decoded state always has `-maxAngle ... maxAngle` (see ``StatePacket``).
    public var angle: Float
    public var buttons: Buttons

    public init(angle: Float = 0, buttons: Buttons = []) {
        self.angle = angle
        self.buttons = buttons
    }

    /// Angle 0, no buttons: what a controller sends on every way out.
    public static let neutral = ControllerState()

    /// The largest tilt the wire carries: ±π/2 (a controller on its side), as the binary32 value
    /// nearest to π/2, bit pattern 0x3FC90FDB — what `(float)M_PI_2` gives in C or Python.
    /// Trap: Swift's `Float.pi / 2` is one ulp smaller (0x3FC90FDA; `Float.pi` rounds toward
    /// zero), and would clamp a C client's π/2.
    public static let maxAngle = Float(bitPattern: 0x3FC9_0FDB)

    /// True when no drive button (forward/backward) is held. The receiver resumes after a
    /// failsafe only on such a state, so a robot never lurches back into motion.
    public var isDriveNeutral: Bool { buttons.isDisjoint(with: .drive) }
}

extension ControllerState: CustomStringConvertible {
    public var description: String { "angle \(angle) buttons \(buttons)" }
}
