import RemoteWire

/// How a controller state becomes memory-map values: the drive (throttle + steering mixed into two
/// motor speeds) and the button bindings. Produces values only (`[address: value]`); the board
/// link turns them into `W` commands.
///
/// The formula is normative (Protocol.md §3.4); ``Mapping/wheelSpeeds(for:)`` is its one
/// implementation, and the golden table in the tests pins it.
public struct Mapping: Sendable, Hashable {
    public var drive: DriveMapping
    /// In file order: when two pressed bindings write the same address, the later one wins.
    public var buttons: [ButtonBinding]

    public init(drive: DriveMapping = DriveMapping(), buttons: [ButtonBinding] = Mapping.kitButtons) {
        self.drive = drive
        self.buttons = buttons
    }

    /// The built-in default: the kit profile (left motor mirrored, A → LED1, B → LED2).
    public static let kit = Mapping()

    /// A → LED1 full, B → LED2 full; released → 0.
    public static let kitButtons: [ButtonBinding] = [
        ButtonBinding(button: .a, address: KitProfile.led1, on: [255], off: [0]),
        ButtonBinding(button: .b, address: KitProfile.led2, on: [255], off: [0]),
    ]
}

/// The addresses of the kit's 36-byte memory map that the default mapping uses.
///
/// Merge note: this is the receiver's copy of `MemoryMapProfile.kit` (BoardProtocol). Addresses
/// reach the receiver only through a ``Mapping``; nothing else in this module names them.
public enum KitProfile {
    public static let size = 36
    public static let buzzerTone: UInt8 = 0x09
    public static let buzzerTime: UInt8 = 0x0A
    public static let led1: UInt8 = 0x0F
    public static let led2: UInt8 = 0x10
    public static let motorLeft: UInt8 = 0x22
    public static let motorRight: UInt8 = 0x23
}

/// Throttle from forward/backward, steering from the tilt, mixed into left/right speeds.
public struct DriveMapping: Sendable, Hashable {
    /// Motor speed for a held forward/backward and for full steering, 0…127.
    public var speed: Int
    /// Tilt (radians) that gives full steering; more saturates.
    public var fullLock: Float
    /// Tilt (radians) around level that steers nothing. Also the resume tolerance: after a
    /// failsafe the robot resumes only on a state whose tilt is inside it (see ``Mapping/isResting(_:)``).
    public var deadzone: Float
    /// 0 = linear steering; 1 = cubic (fine control near level).
    public var expo: Float
    public var left: Motor
    public var right: Motor

    public init(speed: Int = 64, fullLock: Float = Float(Double.pi / 4), deadzone: Float = 0.05, expo: Float = 0,
                left: Motor = Motor(address: KitProfile.motorLeft, inverted: true),
                right: Motor = Motor(address: KitProfile.motorRight, inverted: false)) {
        self.speed = speed
        self.fullLock = fullLock
        self.deadzone = deadzone
        self.expo = expo
        self.left = left
        self.right = right
    }

    public struct Motor: Sendable, Hashable {
        public var address: UInt8
        /// The motor is mounted mirrored: a logical speed v is written as −v.
        public var inverted: Bool

        public init(address: UInt8, inverted: Bool) {
            self.address = address
            self.inverted = inverted
        }

        /// The memory-map byte for a logical speed in −127…127 (two's complement).
        public func byte(for speed: Int) -> UInt8 {
            UInt8(bitPattern: Int8(inverted ? -speed : speed))
        }
    }
}

/// One button driving one address or a run of consecutive addresses (`on.count` bytes from
/// `address`): `on` while the button is held, `off` otherwise.
public struct ButtonBinding: Sendable, Hashable {
    public var button: Buttons
    public var address: UInt8
    public var on: [UInt8]
    public var off: [UInt8]

    public init(button: Buttons, address: UInt8, on: [UInt8], off: [UInt8]) {
        precondition(on.count == off.count && !on.isEmpty, "a binding needs as many off values as on values")
        self.button = button
        self.address = address
        self.on = on
        self.off = off
    }
}

extension Mapping {
    /// The logical wheel speeds (forward positive, before inversion), each in −127…127.
    ///
    /// Protocol.md §3.4, computed in binary64 from the binary32 inputs:
    /// ```
    /// m = |angle|;  s0 = m <= deadzone ? 0 : min(1, (m − deadzone) / (fullLock − deadzone))
    /// s = sign(angle) · ((1 − expo)·s0 + expo·s0³)
    /// t = +1 forward only, −1 backward only, else 0
    /// left = clamp(round(speed·(t + s))),  right = clamp(round(speed·(t − s)))
    /// ```
    /// `round` is to nearest, ties away from zero; `clamp` is to −127…127.
    public func wheelSpeeds(for state: ControllerState) -> (left: Int, right: Int) {
        let d = drive
        let magnitude = Double(state.angle.magnitude)
        let deadzone = Double(d.deadzone)
        var s0 = 0.0
        if magnitude > deadzone {
            s0 = min(1, (magnitude - deadzone) / (Double(d.fullLock) - deadzone))
        }
        let expo = Double(d.expo)
        let shaped = (1 - expo) * s0 + expo * s0 * s0 * s0
        let steer = state.angle < 0 ? -shaped : shaped
        let forward = state.buttons.contains(.forward), backward = state.buttons.contains(.backward)
        let throttle: Double = forward == backward ? 0 : forward ? 1 : -1
        let speed = Double(d.speed)
        return (Self.wheel(speed * (throttle + steer)), Self.wheel(speed * (throttle - steer)))
    }

    static func wheel(_ value: Double) -> Int {
        Int(min(127, max(-127, value.rounded(.toNearestOrAwayFromZero))))
    }

    /// Every value the mapping controls for `state`: both motors and every bound address.
    public func values(for state: ControllerState) -> [UInt8: UInt8] {
        let (l, r) = wheelSpeeds(for: state)
        return values(left: l, right: r, buttons: state.buttons)
    }

    func values(left: Int, right: Int, buttons pressed: Buttons) -> [UInt8: UInt8] {
        var out: [UInt8: UInt8] = [:]
        out.reserveCapacity(2 + buttons.count)
        // Released values first, then every held binding in file order: the last held one wins.
        for binding in buttons {
            for i in binding.off.indices { out[binding.address &+ UInt8(i)] = binding.off[i] }
        }
        for binding in buttons where pressed.contains(binding.button) {
            for i in binding.on.indices { out[binding.address &+ UInt8(i)] = binding.on[i] }
        }
        out[drive.left.address] = drive.left.byte(for: left)
        out[drive.right.address] = drive.right.byte(for: right)
        return out
    }

    /// What the board is set to at start-up and on exit: motors 0, every bound address released.
    public var restValues: [UInt8: UInt8] { values(left: 0, right: 0, buttons: []) }

    /// What the failsafe writes: the motors only (both 0). Bound outputs keep their values.
    public var stopValues: [UInt8: UInt8] {
        [drive.left.address: drive.left.byte(for: 0), drive.right.address: drive.right.byte(for: 0)]
    }

    /// True when `state` would not move the robot: no forward/backward held
    /// (``ControllerState/isDriveNeutral``) and the tilt inside the deadzone, so both wheel
    /// speeds are 0. The failsafe resumes only on such a state.
    public func isResting(_ state: ControllerState) -> Bool {
        guard state.isDriveNeutral else { return false }
        let (l, r) = wheelSpeeds(for: state)
        return l == 0 && r == 0
    }
}
