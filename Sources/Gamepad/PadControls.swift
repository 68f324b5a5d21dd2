/// The controls of a standard gamepad, in SDL's GameController layout: every supported pad is
/// seen through SDL's mapping database as this one layout, so a config names `south`, never
/// "button 0 of a Logitech F310".
///
/// Face buttons are named by position. SDL calls them a/b/x/y (Xbox labels, which are
/// positional there); a Nintendo pad's "A" is the east button, and we read it as `east`
/// because the source sets `SDL_HINT_GAMECONTROLLER_USE_BUTTON_LABELS=0`.
package enum PadButton: Int, CaseIterable, Hashable, Sendable {
    // Raw values are SDL_GameControllerButton's (SDL 2.26): keep the order.
    case south, east, west, north
    case back, guide, start
    case leftStick, rightStick
    case leftShoulder, rightShoulder
    case dpadUp, dpadDown, dpadLeft, dpadRight
    case misc1, paddle1, paddle2, paddle3, paddle4, touchpad

    /// The name used in config files and listings.
    package var name: String {
        switch self {
        case .south: "south"
        case .east: "east"
        case .west: "west"
        case .north: "north"
        case .back: "back"
        case .guide: "guide"
        case .start: "start"
        case .leftStick: "leftstick"
        case .rightStick: "rightstick"
        case .leftShoulder: "leftshoulder"
        case .rightShoulder: "rightshoulder"
        case .dpadUp: "dpup"
        case .dpadDown: "dpdown"
        case .dpadLeft: "dpleft"
        case .dpadRight: "dpright"
        case .misc1: "misc1"
        case .paddle1: "paddle1"
        case .paddle2: "paddle2"
        case .paddle3: "paddle3"
        case .paddle4: "paddle4"
        case .touchpad: "touchpad"
        }
    }
}

/// The axes of the standard layout. Sticks read −1…1 (x: right is +, y: DOWN is +, as in SDL);
/// triggers read 0…1.
package enum PadAxis: Int, CaseIterable, Hashable, Sendable {
    // Raw values are SDL_GameControllerAxis's (SDL 2.26).
    case leftX, leftY, rightX, rightY, leftTrigger, rightTrigger

    package var name: String {
        switch self {
        case .leftX: "leftx"
        case .leftY: "lefty"
        case .rightX: "rightx"
        case .rightY: "righty"
        case .leftTrigger: "lefttrigger"
        case .rightTrigger: "righttrigger"
        }
    }

    package var isTrigger: Bool { self == .leftTrigger || self == .rightTrigger }

    /// SDL's raw reading (Int16) as a float: sticks −32768…32767 → −1…1 (−32768 counts as
    /// −32767, so both ends are exactly ±1, as ROS `joy` does); triggers 0…32767 → 0…1.
    package func normalized(_ raw: Int16) -> Double {
        if isTrigger { return Double(max(0, raw)) / 32767 }
        return Double(max(-32767, raw)) / 32767
    }
}

/// One reading of every control of a pad: the input of ``GamepadMapping/map(_:)``.
package struct PadSnapshot: Hashable, Sendable {
    /// Indexed by ``PadAxis/rawValue``; normalized (see ``PadAxis/normalized(_:)``).
    package var axes: [Double]
    /// Bit n set = the ``PadButton`` with raw value n is held.
    package var buttonBits: UInt32

    package init(axes: [PadAxis: Double] = [:], buttons: Set<PadButton> = []) {
        self.axes = PadAxis.allCases.map { axes[$0] ?? 0 }
        self.buttonBits = buttons.reduce(0) { $0 | 1 << UInt32($1.rawValue) }
    }

    package subscript(axis: PadAxis) -> Double {
        get { axes[axis.rawValue] }
        set { axes[axis.rawValue] = newValue }
    }

    package func isHeld(_ button: PadButton) -> Bool { buttonBits & 1 << UInt32(button.rawValue) != 0 }

    package mutating func set(_ button: PadButton, held: Bool) {
        let bit: UInt32 = 1 << UInt32(button.rawValue)
        buttonBits = held ? buttonBits | bit : buttonBits & ~bit
    }

    package static let rest = PadSnapshot()
}
