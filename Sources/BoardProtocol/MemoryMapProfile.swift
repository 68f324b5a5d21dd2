/// The two firmwares AnalogRemote knows, by the name a person gives them (`--profile`,
/// `profile = "stock"` in a mapping file, `board-sim --firmware`).
package enum BoardProfileKind: String, Sendable, Hashable, CaseIterable {
    /// The kit's published firmware: a 34-byte map (0x00–0x21), no motor bytes.
    case stock
    /// The published firmware extended with two signed motor bytes at 0x22/0x23 (a 36-byte map).
    case motors

    /// The built-in profile of this firmware.
    package var profile: MemoryMapProfile {
        switch self {
        case .stock: .stock
        case .motors: .motors
        }
    }

    /// The firmware a board runs, told by its map size (what a probe reads): 34 or 35 bytes is
    /// the published firmware (35 cannot hold both motor bytes), 36 or more has the motor bytes.
    /// nil below 34: not a programland firmware we know.
    package static func forMapSize(_ size: Int) -> BoardProfileKind? {
        switch size {
        case ..<MemoryMapProfile.publishedFirmwareSize: nil
        case ..<MemoryMapProfile.motors.size: .stock
        default: .motors
        }
    }
}

/// Where things live in a board's memory map, and what the board must hold when nobody drives.
///
/// The kit's published firmware has a 34-byte map (0x00–0x21) and no motors: ``stock``. The
/// kit's motor convention is two signed 8-bit speeds, left then right, ±127, with the left motor
/// mirrored: forward is left negative, right positive. ``motors`` places them right after the
/// published map, at 0x22 and 0x23 (a 36-byte map). Every address can be changed for another
/// firmware.
///
/// | address | name | ``stock`` | ``motors`` | values |
/// |---|---|---|---|---|
/// | ``buzzerTone`` | buzzer tone | 0x09 | 0x09 | 0 off, 1…37 = C3…C6 |
/// | ``buzzerTime`` | buzzer time | 0x0a | 0x0a | × 16 ms |
/// | ``led1`` / ``led2`` | LED brightness | 0x0f / 0x10 | 0x0f / 0x10 | 0…255 |
/// | ``driveVariables`` | the drive's variables | VAR1–VAR3 (0x12–0x14) | none | 0 at rest |
/// | ``motorLeft`` / ``motorRight`` | motor speed | none | 0x22 / 0x23 | Int8 bit pattern, ±127 |
/// | ``hasSensorBlock`` | sensors, switch, BME280 (read only) | 0x07–0x11 | 0x07–0x11 | ``SensorBlock`` |
package struct MemoryMapProfile: Sendable, Hashable {
    /// `stock`, `motors`, or a name given by whoever built the profile.
    package var name: String
    /// Bytes in the map (addresses 0..<size). The firmware drops writes past it.
    package var size: Int
    /// The motor bytes; nil when the firmware has no motors.
    package var motorLeft: UInt8?
    package var motorRight: UInt8?
    package var led1: UInt8
    package var led2: UInt8
    package var buzzerTone: UInt8
    package var buzzerTime: UInt8
    /// Further addresses that hold 0 in the safe state: the variables a drive mapping writes
    /// for a program on the board (the stock mapping's signed wheel speeds and buttons).
    package var driveVariables: [UInt8]
    /// The firmware rewrites the sensor block 0x07…0x11 (``SensorBlock``) on every loop, so a
    /// link may read it; false for a firmware that keeps something else there.
    package var hasSensorBlock: Bool

    package init(name: String = "motors", size: Int = 36, motorLeft: UInt8? = 0x22, motorRight: UInt8? = 0x23,
                led1: UInt8 = 0x0F, led2: UInt8 = 0x10, buzzerTone: UInt8 = 0x09, buzzerTime: UInt8 = 0x0A,
                driveVariables: [UInt8] = [], hasSensorBlock: Bool = true) {
        self.hasSensorBlock = hasSensorBlock
        self.name = name
        self.size = size
        self.motorLeft = motorLeft
        self.motorRight = motorRight
        self.led1 = led1
        self.led2 = led2
        self.buzzerTone = buzzerTone
        self.buzzerTime = buzzerTime
        self.driveVariables = driveVariables
    }

    /// The published firmware: 34 bytes, no motors; the drive's variables are VAR1–VAR3.
    package static let stock = MemoryMapProfile(name: "stock", size: publishedFirmwareSize, motorLeft: nil, motorRight: nil,
                                               driveVariables: [0x12, 0x13, 0x14])
    /// The firmware extended with motors at 0x22/0x23 (36 bytes).
    package static let motors = MemoryMapProfile()
    /// The profile the receiver used before profiles had names: ``motors``.
    package static let kit = motors

    /// The published firmware's map size.
    package static let publishedFirmwareSize = 34

    /// The firmware's fixed addresses (its `#define`s; the same in both firmwares).
    package enum Address {
        package static let productID: UInt8 = 0x00
        package static let versionID: UInt8 = 0x01
        package static let execMode: UInt8 = 0x02
        package static let sequenceCounterHigh: UInt8 = 0x03
        package static let sequenceCounterLow: UInt8 = 0x04
        package static let random: UInt8 = 0x05
        package static let timer: UInt8 = 0x06
        package static let temperature: UInt8 = 0x07
        package static let humidity: UInt8 = 0x08
        package static let sensor1: UInt8 = 0x0B
        package static let switchValue: UInt8 = 0x11
        /// VAR1…VAR8 are 0x12…0x19.
        package static let variable1: UInt8 = 0x12
        /// LOOP1…LOOP8 are 0x1a…0x21.
        package static let loop1: UInt8 = 0x1A
    }

    /// True when the profile has both motor bytes.
    package var hasMotors: Bool { motorLeft != nil && motorRight != nil }

    /// What the board must hold when nobody drives: motors 0 (where there are motors), LEDs 0,
    /// buzzer tone 0 and time 0, the drive's variables 0.
    package var safeState: [UInt8: UInt8] {
        var out: [UInt8: UInt8] = [led1: 0, led2: 0, buzzerTone: 0, buzzerTime: 0]
        if let motorLeft { out[motorLeft] = 0 }
        if let motorRight { out[motorRight] = 0 }
        for v in driveVariables { out[v] = 0 }
        return out
    }

    /// The two motor bytes for signed speeds (the left one is not mirrored here: pass what the
    /// board should get). Empty without motors.
    package func motors(left: Int8, right: Int8) -> [UInt8: UInt8] {
        var out: [UInt8: UInt8] = [:]
        if let motorLeft { out[motorLeft] = UInt8(bitPattern: left) }
        if let motorRight { out[motorRight] = UInt8(bitPattern: right) }
        return out
    }

    /// A message naming what is wrong, or nil when the profile is usable: size 1…256, every
    /// address inside the map, no two roles sharing an address.
    package var problem: String? {
        guard (1...256).contains(size) else { return "memory map size \(size) is not in 1…256" }
        var roles: [(String, UInt8)] = []
        if let motorLeft { roles.append(("motor-left", motorLeft)) }
        if let motorRight { roles.append(("motor-right", motorRight)) }
        roles += [("led1", led1), ("led2", led2), ("buzzer-tone", buzzerTone), ("buzzer-time", buzzerTime)]
        roles += driveVariables.map { ("drive variable", $0) }
        for (name, address) in roles where Int(address) >= size {
            return "\(name) address 0x\(ByteText.hexPair(address)) is outside the \(size)-byte memory map"
        }
        for i in roles.indices {
            for j in roles.indices where j > i && roles[i].1 == roles[j].1 {
                return "\(roles[i].0) and \(roles[j].0) share address 0x\(ByteText.hexPair(roles[i].1))"
            }
        }
        return nil
    }

    /// This profile on a board whose map has `size` bytes: the safe state keeps only the
    /// addresses the board has.
    package func safeState(onMapOf size: Int) -> [UInt8: UInt8] {
        safeState.filter { Int($0.key) < size }
    }
}
