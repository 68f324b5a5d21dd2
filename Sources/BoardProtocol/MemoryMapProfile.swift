/// Where things live in a board's memory map.
///
/// The kit's published firmware has a 34-byte map (0x00–0x21) and no motors. The kit's motor
/// convention is two signed 8-bit speeds, left then right, ±127, with the left motor mirrored:
/// forward is left negative, right positive. ``kit`` places them right after the published map,
/// at 0x22 and 0x23 (a 36-byte map); every address can be changed for another firmware.
///
/// | address | name | ``kit`` | values |
/// |---|---|---|---|
/// | ``buzzerTone`` | buzzer tone | 0x09 | 0 off, 1…37 = C3…C6 |
/// | ``buzzerTime`` | buzzer time | 0x0a | × 16 ms |
/// | ``led1`` / ``led2`` | LED brightness | 0x0f / 0x10 | 0…255 |
/// | ``motorLeft`` / ``motorRight`` | motor speed | 0x22 / 0x23 | Int8 bit pattern, ±127 |
public struct MemoryMapProfile: Sendable, Hashable {
    /// Bytes in the map (addresses 0..<size). The firmware drops writes past it.
    public var size: Int
    public var motorLeft: UInt8
    public var motorRight: UInt8
    public var led1: UInt8
    public var led2: UInt8
    public var buzzerTone: UInt8
    public var buzzerTime: UInt8

    public init(size: Int = 36, motorLeft: UInt8 = 0x22, motorRight: UInt8 = 0x23,
                led1: UInt8 = 0x0F, led2: UInt8 = 0x10, buzzerTone: UInt8 = 0x09, buzzerTime: UInt8 = 0x0A) {
        self.size = size
        self.motorLeft = motorLeft
        self.motorRight = motorRight
        self.led1 = led1
        self.led2 = led2
        self.buzzerTone = buzzerTone
        self.buzzerTime = buzzerTime
    }

    /// The programland kit with motors at 0x22/0x23 (36 bytes).
    public static let kit = MemoryMapProfile()

    /// The published firmware's own 34-byte map (no motors; the motor addresses point past it
    /// and are dropped by the board). For talking to an unmodified kit.
    public static let publishedFirmwareSize = 34

    /// What the board must hold when nobody drives: motors 0, LEDs 0, buzzer tone 0 and time 0.
    public var safeState: [UInt8: UInt8] {
        [motorLeft: 0, motorRight: 0, led1: 0, led2: 0, buzzerTone: 0, buzzerTime: 0]
    }

    /// The two motor bytes for signed speeds (the left one is not mirrored here: pass what the
    /// board should get).
    public func motors(left: Int8, right: Int8) -> [UInt8: UInt8] {
        [motorLeft: UInt8(bitPattern: left), motorRight: UInt8(bitPattern: right)]
    }

    /// A message naming what is wrong, or nil when the profile is usable: size 1…256, every
    /// address inside the map, no two roles sharing an address.
    public var problem: String? {
        guard (1...256).contains(size) else { return "memory map size \(size) is not in 1…256" }
        let roles: [(String, UInt8)] = [("motor-left", motorLeft), ("motor-right", motorRight), ("led1", led1),
                                        ("led2", led2), ("buzzer-tone", buzzerTone), ("buzzer-time", buzzerTime)]
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
}
