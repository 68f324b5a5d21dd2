import Receiver

/// What a ``RobotReceiver`` asks your robot to do: the kit's outputs after the receiver's
/// mapping (drive mix, failsafe, ownership, stop-all) — every value is the one to apply now.
public struct RobotOutput: Hashable, Sendable {
    /// The left wheel's speed, −127…127; positive drives forward.
    public var leftMotor: Int
    /// The right wheel's speed, −127…127; positive drives forward.
    public var rightMotor: Int
    /// The two LEDs' brightness, 0…255 (on the kit, buttons A and B).
    public var lights: [Int]
    /// The buzzer: its tone (0 = silent) and how long it sounds, in the kit's units.
    public var buzzerTone: Int
    public var buzzerDuration: Int
    /// True when this is the safe state (motors off): at start, on the failsafe, on a teacher's
    /// stop and when the receiver stops. Drive nothing until the next output says otherwise.
    public var isSafeState: Bool
    /// The whole memory map as the kit's board would hold it (36 bytes), for a robot that wants
    /// more than the named outputs.
    public var memoryMap: [UInt8]

    /// A resting robot.
    public static let rest = RobotOutput(map: [UInt8](repeating: 0, count: KitProfile.size), mapping: .kit, safe: true)

    init(map: [UInt8], mapping: Mapping, safe: Bool) {
        func byte(_ address: UInt8) -> UInt8 { Int(address) < map.count ? map[Int(address)] : 0 }
        func speed(_ motor: DriveMapping.Motor) -> Int {
            let v = Int(Int8(bitPattern: byte(motor.address)))
            return motor.inverted ? -v : v
        }
        leftMotor = speed(mapping.drive.left)
        rightMotor = speed(mapping.drive.right)
        lights = [Int(byte(KitProfile.led1)), Int(byte(KitProfile.led2))]
        buzzerTone = Int(byte(KitProfile.buzzerTone))
        buzzerDuration = Int(byte(KitProfile.buzzerTime))
        isSafeState = safe
        memoryMap = map
    }
}
