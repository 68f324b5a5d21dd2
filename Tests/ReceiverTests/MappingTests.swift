import BoardProtocol
import Receiver
import RemoteWire
import Testing

/// One row of the golden table: a state in, the kit's memory-map values out.
struct GoldenMapping: Sendable, CustomTestStringConvertible {
    let name: String
    let packet: String          // the 8 bytes on the wire, hex
    let left: UInt8             // 0x22
    let right: UInt8            // 0x23
    let led1: UInt8             // 0x0F
    let led2: UInt8             // 0x10
    let resting: Bool

    var testDescription: String { name }
    var state: ControllerState { try! StatePacket.decode(Hex.bytes(packet)!) }
}

/// Worked by hand from the formula in Protocol.md §3.4 (kit: speed 64, full lock = the binary32
/// nearest pi/4, deadzone 0.05, expo 0, left mirrored). Shared with the end-to-end golden test.
let goldenMappings: [GoldenMapping] = [
    .init(name: "neutral", packet: "0000000000000000", left: 0x00, right: 0x00, led1: 0, led2: 0, resting: true),
    .init(name: "forward, level", packet: "0000000000000001", left: 0xC0, right: 0x40, led1: 0, led2: 0, resting: false),
    .init(name: "backward, level", packet: "0000000000000002", left: 0x40, right: 0xC0, led1: 0, led2: 0, resting: false),
    // 64·(1+1) = 128 → clamped 127 on the left (mirrored: -127 = 0x81), 0 on the right.
    .init(name: "forward, full lock right", packet: "3f490fdb00000001", left: 0x81, right: 0x00, led1: 0, led2: 0, resting: false),
    .init(name: "forward, +pi/2 saturates", packet: "3fc90fdb00000001", left: 0x81, right: 0x00, led1: 0, led2: 0, resting: false),
    // No throttle: tilt turns on the spot (left +64 → 0xC0, right -64 → 0xC0).
    .init(name: "full lock right, no throttle", packet: "3f490fdb00000000", left: 0xC0, right: 0xC0, led1: 0, led2: 0, resting: false),
    .init(name: "full lock left, no throttle", packet: "bf490fdb00000000", left: 0x40, right: 0x40, led1: 0, led2: 0, resting: false),
    // s = (0.5-0.05)/(pi/4-0.05) = 0.61191; 64·1.61191 = 103.16 → 103 (0x99 mirrored), 64·0.38809 = 24.84 → 25.
    .init(name: "forward, 0.5 rad right", packet: "3f00000000000001", left: 0x99, right: 0x19, led1: 0, led2: 0, resting: false),
    // s = -0.27196; -64-17.41 = -81.41 → -81 (0x51 mirrored), -64+17.41 = -46.59 → -47 (0xd1); A → LED1.
    .init(name: "backward + A, 0.25 rad left", packet: "be80000000000006", left: 0x51, right: 0xD1, led1: 255, led2: 0, resting: false),
    .init(name: "backward, 0.3 rad right", packet: "3e99999a00000002", left: 0x2A, right: 0xAA, led1: 0, led2: 0, resting: false),
    .init(name: "forward, 0.6 rad left", packet: "bf19999a00000001", left: 0xF0, right: 0x70, led1: 0, led2: 0, resting: false),
    .init(name: "forward, 0.04 rad is inside the deadzone", packet: "3d23d70a00000001", left: 0xC0, right: 0x40, led1: 0, led2: 0, resting: false),
    .init(name: "0.04 rad, no throttle, is resting", packet: "3d23d70a00000000", left: 0x00, right: 0x00, led1: 0, led2: 0, resting: true),
    // Forward and backward together cancel (t = 0) but are not drive-neutral.
    .init(name: "forward + backward", packet: "0000000000000003", left: 0x00, right: 0x00, led1: 0, led2: 0, resting: false),
    .init(name: "A and B, level", packet: "000000000000000c", left: 0x00, right: 0x00, led1: 255, led2: 255, resting: true),
    // t = 0, s = 0.10199 → ±6.53 → ±7: left +7 mirrored = 0xf9, right -7 = 0xf9.
    .init(name: "every button at 0.125", packet: "3e00000000007fff", left: 0xF9, right: 0xF9, led1: 255, led2: 255, resting: false),
]

@Suite struct MappingTests {
    @Test(arguments: goldenMappings)
    func kitGoldenTable(row: GoldenMapping) {
        let values = Mapping.kit.values(for: row.state)
        #expect(values == [0x22: row.left, 0x23: row.right, 0x0F: row.led1, 0x10: row.led2])
        #expect(Mapping.kit.isResting(row.state) == row.resting)
    }

    /// Ties round away from zero: with full lock 1 rad, no deadzone, 0.0078125 rad steers
    /// exactly 0.5/64, so the wheels get 64.5 → 65 and 63.5 → 64; backward -63.5 → -64 and -64.5 → -65.
    @Test func tiesRoundAwayFromZero() {
        var m = Mapping.kit
        m.drive.fullLock = 1
        m.drive.deadzone = 0
        let angle: Float = 0.0078125
        #expect(m.wheelSpeeds(for: ControllerState(angle: angle, buttons: .forward)) == (65, 64))
        #expect(m.wheelSpeeds(for: ControllerState(angle: angle, buttons: .backward)) == (-64, -65))
        #expect(m.wheelSpeeds(for: ControllerState(angle: -angle, buttons: [])) == (-1, 1))
    }

    @Test func expoSoftensTheMiddleButKeepsFullLock() {
        var m = Mapping.kit
        m.drive.expo = 0.5
        // s0 = 0.61191; 0.5·s0 + 0.5·s0³ = 0.42051 → 64·1.42051 = 90.91 → 91, 64·0.57949 = 37.09 → 37.
        #expect(m.wheelSpeeds(for: ControllerState(angle: 0.5, buttons: .forward)) == (91, 37))
        #expect(m.wheelSpeeds(for: ControllerState(angle: Float(Double.pi / 4), buttons: .forward)) == (127, 0))
    }

    @Test func speedAndInversionAreConfigurable() {
        var m = Mapping.kit
        m.drive.speed = 127
        m.drive.left.inverted = false
        m.drive.right.inverted = true
        let v = m.values(for: ControllerState(angle: 0, buttons: .forward))
        #expect(v[0x22] == 0x7F && v[0x23] == 0x81)
        #expect(m.wheelSpeeds(for: ControllerState(angle: 0.3, buttons: .forward)) == (127, 84))
    }

    @Test func laterHeldBindingWinsAndReleasedNeverOverridesHeld() {
        var m = Mapping.kit
        m.buttons = [
            ButtonBinding(button: .x, address: 0x09, on: [10, 3], off: [0, 0]),
            ButtonBinding(button: .y, address: 0x09, on: [20], off: [0]),
            ButtonBinding(button: .a, address: 0x0F, on: [255], off: [0]),
        ]
        #expect(m.values(for: ControllerState(buttons: .x)) == [0x09: 10, 0x0A: 3, 0x0F: 0, 0x22: 0, 0x23: 0])
        #expect(m.values(for: ControllerState(buttons: .y)) == [0x09: 20, 0x0A: 0, 0x0F: 0, 0x22: 0, 0x23: 0])
        #expect(m.values(for: ControllerState(buttons: [.x, .y, .a])) == [0x09: 20, 0x0A: 3, 0x0F: 255, 0x22: 0, 0x23: 0])
        #expect(m.restValues == [0x09: 0, 0x0A: 0, 0x0F: 0, 0x22: 0, 0x23: 0])
        #expect(m.stopValues == [0x22: 0, 0x23: 0])
    }

    @Test func zeroIsWrittenAsZeroWhetherMirroredOrNot() {
        #expect(DriveMapping.Motor(address: 0x22, inverted: true).byte(for: 0) == 0)
        #expect(DriveMapping.Motor(address: 0x22, inverted: true).byte(for: -127) == 0x7F)
        #expect(DriveMapping.Motor(address: 0x22, inverted: false).byte(for: -127) == 0x81)
    }
}

/// The stock profile's default mapping (Protocol.md §3.4): the drive on the LEDs and in
/// VAR1–VAR3, the horn on the buzzer.
@Suite struct StockMappingTests {
    struct Row: Sendable, CustomStringConvertible {
        let name: String
        let state: ControllerState
        let values: [UInt8: UInt8]
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(name: "neutral", state: ControllerState(angle: 0, buttons: []),
            values: [0x0F: 0, 0x10: 0, 0x12: 0, 0x13: 0, 0x14: 0, 0x09: 0, 0x0A: 0]),
        Row(name: "forward, level: both LEDs at 128", state: ControllerState(angle: 0, buttons: .forward),
            values: [0x0F: 0x80, 0x10: 0x80, 0x12: 0x40, 0x13: 0x40, 0x14: 0x01, 0x09: 0, 0x0A: 0]),
        Row(name: "forward, full lock right: the left LED brighter", state: ControllerState(angle: 0.7853982, buttons: .forward),
            values: [0x0F: 0xFE, 0x10: 0, 0x12: 0x7F, 0x13: 0, 0x14: 0x01, 0x09: 0, 0x0A: 0]),
        Row(name: "backward: the LEDs show speed, the variables the sign", state: ControllerState(angle: 0, buttons: .backward),
            values: [0x0F: 0x80, 0x10: 0x80, 0x12: 0xC0, 0x13: 0xC0, 0x14: 0x02, 0x09: 0, 0x0A: 0]),
        Row(name: "A: the horn", state: ControllerState(angle: 0, buttons: .a),
            values: [0x0F: 0, 0x10: 0, 0x12: 0, 0x13: 0, 0x14: 0x04, 0x09: 22, 0x0A: 125]),
        Row(name: "B and r: VAR3 only", state: ControllerState(angle: 0, buttons: [.b, .r, .start]),
            values: [0x0F: 0, 0x10: 0, 0x12: 0, 0x13: 0, 0x14: 0x88, 0x09: 0, 0x0A: 0]),
    ]

    @Test(arguments: rows)
    func stateGivesTheDocumentedValues(row: Row) {
        #expect(Mapping.stock.values(for: row.state) == row.values)
    }

    @Test func everyAddressIsOnTheStockMapAndTheStopAndRestValuesAreTheDriveAtZero() {
        #expect(Mapping.stock.addresses.allSatisfy { $0.address <= 0x21 })
        #expect(Mapping.stock.firstMissing(onMapOf: 34) == nil)
        #expect(Mapping.motors.firstMissing(onMapOf: 34)?.address == 0x22)
        #expect(Mapping.motors.firstMissing(onMapOf: 34)?.key == "drive.left.address")
        #expect(Mapping.stock.stopValues == [0x0F: 0, 0x10: 0, 0x12: 0, 0x13: 0, 0x14: 0])
        #expect(Mapping.stock.restValues == [0x0F: 0, 0x10: 0, 0x12: 0, 0x13: 0, 0x14: 0, 0x09: 0, 0x0A: 0])
    }

    @Test func theLinkProfileZeroesTheDrivesVariablesInItsSafeState() {
        let profile = Mapping.stock.linkProfile(base: .stock)
        #expect(profile.safeState == [0x09: 0, 0x0A: 0, 0x0F: 0, 0x10: 0, 0x12: 0, 0x13: 0, 0x14: 0])
        #expect(Mapping.motors.linkProfile(base: .motors) == .motors, "the motors profile is unchanged")
    }
}
