import BoardProtocol
import RemoteWire

/// How a controller state becomes memory-map values: the drive (throttle + steering mixed into two
/// wheel speeds, written as signed bytes and optionally as LED brightness), the button bindings,
/// and optionally the button word's low byte. Produces values only (`[address: value]`); the board
/// link turns them into `W` commands.
///
/// The formula is normative (Protocol.md §3.4); ``Mapping/wheelSpeeds(for:)`` is its one
/// implementation, and the golden table in the tests pins it.
package struct Mapping: Sendable, Hashable {
    /// The board profile this mapping is made for (its default, and the map it must fit).
    package var profile: BoardProfileKind
    package var drive: DriveMapping
    /// In file order: when two pressed bindings write the same address, the later one wins.
    package var buttons: [ButtonBinding]
    /// Where the low byte of the button word goes (bit 0 forward … bit 7 r), for a program on
    /// the board; nil: nowhere.
    package var buttonsByte: UInt8?

    package init(profile: BoardProfileKind = .motors, drive: DriveMapping = DriveMapping(),
                buttons: [ButtonBinding] = Mapping.kitButtons, buttonsByte: UInt8? = nil) {
        self.profile = profile
        self.drive = drive
        self.buttons = buttons
        self.buttonsByte = buttonsByte
    }

    /// The motors profile's default (today's kit mapping): motors at 0x22/0x23, left mirrored,
    /// A → LED1, B → LED2.
    package static let kit = Mapping()
    package static let motors = kit

    /// The stock profile's default, for the published firmware (no motors): what a person sees
    /// and hears on the board, and what a program running on it can read.
    ///
    /// | output | address | value |
    /// |---|---|---|
    /// | left wheel brightness | LED1 0x0f | \|left\| × 2 (0…254): forward → both light up; a right turn → LED1 brighter |
    /// | right wheel brightness | LED2 0x10 | \|right\| × 2 |
    /// | left wheel, signed | VAR1 0x12 | −127…127, two's complement, forward positive |
    /// | right wheel, signed | VAR2 0x13 | the same |
    /// | buttons | VAR3 0x14 | bit 0 forward, 1 backward, 2 a, 3 b, 4 x, 5 y, 6 l, 7 r |
    /// | horn (A) | buzzer 0x09/0x0a | tone 22 (A4, 440 Hz) for up to 2 s while held; 0/0 on release |
    package static let stock = Mapping(
        profile: .stock,
        drive: DriveMapping(left: DriveMapping.Motor(address: 0x12, inverted: false, led: 0x0F),
                            right: DriveMapping.Motor(address: 0x13, inverted: false, led: 0x10)),
        buttons: [ButtonBinding(button: .a, address: 0x09, on: [hornTone, hornTime], off: [0, 0])],
        buttonsByte: 0x14)

    /// The horn: tone 22 of the firmware's table (A4, 440 Hz) for 125 × 16 ms = 2 s at most.
    package static let hornTone: UInt8 = 22
    package static let hornTime: UInt8 = 125

    /// The built-in default of `profile`.
    package static func `default`(for profile: BoardProfileKind) -> Mapping {
        profile == .stock ? stock : motors
    }

    /// A → LED1 full, B → LED2 full; released → 0.
    package static let kitButtons: [ButtonBinding] = [
        ButtonBinding(button: .a, address: KitProfile.led1, on: [255], off: [0]),
        ButtonBinding(button: .b, address: KitProfile.led2, on: [255], off: [0]),
    ]
}

/// The addresses of the kit's 36-byte memory map that the default mapping uses.
///
/// Merge note: this is the receiver's copy of `MemoryMapProfile.kit` (BoardProtocol). Addresses
/// reach the receiver only through a ``Mapping``; nothing else in this module names them.
package enum KitProfile {
    package static let size = 36
    package static let buzzerTone: UInt8 = 0x09
    package static let buzzerTime: UInt8 = 0x0A
    package static let led1: UInt8 = 0x0F
    package static let led2: UInt8 = 0x10
    package static let motorLeft: UInt8 = 0x22
    package static let motorRight: UInt8 = 0x23
}

/// Throttle from forward/backward, steering from the tilt, mixed into left/right speeds.
package struct DriveMapping: Sendable, Hashable {
    /// Motor speed for a held forward/backward and for full steering, 0…127.
    package var speed: Int
    /// Tilt (radians) that gives full steering; more saturates.
    package var fullLock: Float
    /// Tilt (radians) around level that steers nothing. Also the resume tolerance: after a
    /// failsafe the robot resumes only on a state whose tilt is inside it (see ``Mapping/isResting(_:)``).
    package var deadzone: Float
    /// 0 = linear steering; 1 = cubic (fine control near level).
    package var expo: Float
    package var left: Motor
    package var right: Motor

    package init(speed: Int = 64, fullLock: Float = Float(Double.pi / 4), deadzone: Float = 0.05, expo: Float = 0,
                left: Motor = Motor(address: KitProfile.motorLeft, inverted: true),
                right: Motor = Motor(address: KitProfile.motorRight, inverted: false)) {
        self.speed = speed
        self.fullLock = fullLock
        self.deadzone = deadzone
        self.expo = expo
        self.left = left
        self.right = right
    }

    package struct Motor: Sendable, Hashable {
        package var address: UInt8
        /// The motor is mounted mirrored: a logical speed v is written as −v.
        package var inverted: Bool
        /// Where the wheel's speed also shows as brightness (an LED), |v| × 2; nil: nowhere.
        package var led: UInt8?

        package init(address: UInt8, inverted: Bool, led: UInt8? = nil) {
            self.address = address
            self.inverted = inverted
            self.led = led
        }

        /// The memory-map byte for a logical speed in −127…127 (two's complement).
        package func byte(for speed: Int) -> UInt8 {
            UInt8(bitPattern: Int8(inverted ? -speed : speed))
        }

        /// The brightness for a logical speed: |v| × 2, 0…254 (the direction is in the signed byte).
        package static func brightness(for speed: Int) -> UInt8 {
            UInt8(min(255, 2 * min(127, abs(speed))))
        }
    }
}

/// One button driving one address or a run of consecutive addresses (`on.count` bytes from
/// `address`): `on` while the button is held, `off` otherwise.
package struct ButtonBinding: Sendable, Hashable {
    package var button: Buttons
    package var address: UInt8
    package var on: [UInt8]
    package var off: [UInt8]

    package init(button: Buttons, address: UInt8, on: [UInt8], off: [UInt8]) {
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
    package func wheelSpeeds(for state: ControllerState) -> (left: Int, right: Int) {
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
    package func values(for state: ControllerState) -> [UInt8: UInt8] {
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
        if let address = buttonsByte { out[address] = UInt8(truncatingIfNeeded: pressed.rawValue) }
        out.merge(driveValues(left: left, right: right)) { $1 }
        return out
    }

    /// The drive's own bytes for logical speeds: the signed bytes and the LEDs.
    func driveValues(left: Int, right: Int) -> [UInt8: UInt8] {
        var out: [UInt8: UInt8] = [drive.left.address: drive.left.byte(for: left), drive.right.address: drive.right.byte(for: right)]
        if let led = drive.left.led { out[led] = DriveMapping.Motor.brightness(for: left) }
        if let led = drive.right.led { out[led] = DriveMapping.Motor.brightness(for: right) }
        return out
    }

    /// What the board is set to at start-up and on exit: the drive at 0, every bound address
    /// released, the buttons byte 0.
    package var restValues: [UInt8: UInt8] { values(left: 0, right: 0, buttons: []) }

    /// What the failsafe writes: the drive at rest — both signed speeds 0, their LEDs 0, the
    /// buttons byte 0. Bound outputs (an LED, the horn) keep their values.
    package var stopValues: [UInt8: UInt8] {
        var out = driveValues(left: 0, right: 0)
        if let address = buttonsByte { out[address] = 0 }
        return out
    }

    /// Every address the mapping may write, with the key that names it (for the one-line
    /// refusal when a board lacks one), in address order.
    package var addresses: [(address: UInt8, key: String)] {
        var out: [UInt8: String] = [:]
        for (i, binding) in buttons.enumerated().reversed() {
            for offset in binding.on.indices { out[binding.address &+ UInt8(offset)] = "buttons[\(i)].address" }
        }
        if let address = buttonsByte { out[address] = "buttons_byte" }
        if let led = drive.left.led { out[led] = "drive.left.led" }
        if let led = drive.right.led { out[led] = "drive.right.led" }
        out[drive.left.address] = "drive.left.address"
        out[drive.right.address] = "drive.right.address"
        return out.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The first address a board of `mapSize` bytes lacks, with its key; nil when it fits.
    package func firstMissing(onMapOf mapSize: Int) -> (address: UInt8, key: String)? {
        addresses.first { Int($0.address) >= mapSize }
    }

    /// The board link's profile for this mapping on `base`: the base's LEDs, buzzer and motor
    /// bytes, with the mapping's signed drive bytes (motors or variables) and buttons byte
    /// added to the safe state, so the link's safe state (written first after every open) puts
    /// this drive at rest.
    package func linkProfile(base: MemoryMapProfile) -> MemoryMapProfile {
        var profile = base
        let roles = Set([base.motorLeft, base.motorRight].compactMap { $0 } + [base.led1, base.led2, base.buzzerTone, base.buzzerTime])
        var variables = base.driveVariables
        for address in [drive.left.address, drive.right.address] + [buttonsByte].compactMap({ $0 })
        where !roles.contains(address) && !variables.contains(address) {
            variables.append(address)
        }
        profile.driveVariables = variables
        return profile
    }

    /// True when `state` would not move the robot: no forward/backward held
    /// (``ControllerState/isDriveNeutral``) and the tilt inside the deadzone, so both wheel
    /// speeds are 0. The failsafe resumes only on such a state.
    package func isResting(_ state: ControllerState) -> Bool {
        guard state.isDriveNeutral else { return false }
        let (l, r) = wheelSpeeds(for: state)
        return l == 0 && r == 0
    }
}
