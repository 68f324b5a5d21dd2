import Gamepad
import PropertyBased
import RemoteWire
import Testing

@Suite struct GamepadMappingTests {
    let mapping = GamepadMapping.standard
    let quarterPi = Float(Double.pi / 4)

    func state(_ axes: [PadAxis: Double] = [:], _ buttons: Set<PadButton> = [], mapping: GamepadMapping? = nil) -> ControllerState {
        (mapping ?? self.mapping).map(PadSnapshot(axes: axes, buttons: buttons)).state
    }

    @Test func fullDeflectionIsExactlyTheFullLockAngle() {
        #expect(quarterPi.bitPattern == 0x3F49_0FDB)
        #expect(state([.leftX: 1]).angle == quarterPi)
        #expect(state([.leftX: -1]).angle == -quarterPi)
        // SDL's most negative reading counts as full left, not slightly beyond it.
        #expect(state([.leftX: PadAxis.leftX.normalized(-32768)]).angle == -quarterPi)
        #expect(state([.leftX: PadAxis.leftX.normalized(32767)]).angle == quarterPi)
    }

    @Test func stickRightIsPositiveAngle() {
        #expect(state([.leftX: 0.5]).angle > 0)
        #expect(state([.leftX: -0.5]).angle < 0)
    }

    @Test(arguments: [0.0, 0.01, 0.0499, 0.05, -0.05, -0.03])
    func insideTheDeadzoneIsLevel(x: Double) {
        let angle = state([.leftX: x]).angle
        #expect(angle == 0)
        #expect(angle.sign == .plus, "never −0 on the wire")
    }

    @Test func outsideTheDeadzoneIsRescaledSoItStartsFromZero() {
        // 0.525 is halfway between the deadzone edge and full deflection.
        let half = state([.leftX: 0.525]).angle
        #expect(abs(half - quarterPi / 2) < 1e-6)
        let justOutside = state([.leftX: 0.0501]).angle
        #expect(justOutside > 0 && justOutside < 1e-3)
    }

    @Test func expoKeepsTheEndsAndSoftensTheMiddle() {
        var m = mapping
        m.expo = 1
        #expect(state([.leftX: 1], mapping: m).angle == quarterPi)
        let x = 0.05 + 0.95 * 0.5   // rescaled 0.5 → 0.125 with full expo
        #expect(abs(state([.leftX: x], mapping: m).angle - quarterPi * 0.125) < 1e-6)
        m.expo = 0.5
        #expect(abs(state([.leftX: x], mapping: m).angle - quarterPi * 0.3125) < 1e-6)
    }

    @Test func shapeIsBoundedOddMonotoneAndContinuousAtTheDeadzone() async {
        await propertyCheck(count: 300, input: Gen.double(in: -1.5...1.5), Gen.double(in: 0...0.9), Gen.double(in: 0...1)) { x, dz, expo in
            let y = GamepadMapping.shape(x, deadzone: dz, expo: expo)
            #expect(abs(y) <= 1)
            #expect(GamepadMapping.shape(-x, deadzone: dz, expo: expo) == -y)
            let bigger = GamepadMapping.shape(abs(x) + 0.01, deadzone: dz, expo: expo)
            #expect(bigger >= abs(y))
            // Continuous at the deadzone edge: a hair outside gives a hair of output.
            #expect(GamepadMapping.shape(dz + 1e-9, deadzone: dz, expo: expo) < 1e-6)
        }
    }

    @Test func invertAndOtherAxisAndFullLock() {
        var m = mapping
        m.invertSteer = true
        #expect(state([.leftX: 1], mapping: m).angle == -quarterPi)
        #expect(state([.leftX: 0], mapping: m).angle.sign == .plus)
        m.steerAxis = .rightX
        m.fullLockAngle = ControllerState.maxAngle
        #expect(state([.rightX: -1, .leftX: 1], mapping: m).angle == ControllerState.maxAngle)
    }

    @Test func forwardAndBackwardFromDpadOrTriggersPastHalf() {
        #expect(state([:], [.dpadUp]).buttons == .forward)
        #expect(state([:], [.dpadDown]).buttons == .backward)
        #expect(state([.rightTrigger: 0.51]).buttons == .forward)
        #expect(state([.leftTrigger: 0.51]).buttons == .backward)
        #expect(state([.rightTrigger: 0.5, .leftTrigger: 0.5]).buttons == [])
        // SDL trigger readings: 16383 is just under half, 16384 just over.
        #expect(state([.rightTrigger: PadAxis.rightTrigger.normalized(16383)]).buttons == [])
        #expect(state([.rightTrigger: PadAxis.rightTrigger.normalized(16384)]).buttons == .forward)
        #expect(state([.rightTrigger: 1], [.dpadUp]).buttons == .forward)
    }

    @Test(arguments: [
        (PadButton.south, Buttons.a), (.east, .b), (.west, .x), (.north, .y),
        (.leftShoulder, .l), (.rightShoulder, .r), (.start, .start), (.back, .select), (.guide, .home),
        (.leftStick, .l3), (.rightStick, .r3), (.dpadLeft, .left), (.dpadRight, .right),
        (.dpadUp, .forward), (.dpadDown, .backward),
        (.misc1, Buttons()), (.paddle1, Buttons()), (.touchpad, Buttons()),
    ])
    func eachButtonSetsItsBit(button: PadButton, bit: Buttons) {
        let s = state([:], [button])
        #expect(s.buttons == bit)
        #expect(s.angle == 0)
    }

    @Test func everyButtonAtOnceSetsEveryNamedBit() {
        #expect(state([:], Set(PadButton.allCases)).buttons == .defined)
    }

    @Test func enableAndStopControlsAreConsumed() {
        var m = mapping
        m.enable = .button(.leftShoulder)
        m.stop = .trigger(.leftTrigger)
        let held = m.map(PadSnapshot(axes: [.leftTrigger: 1], buttons: [.leftShoulder, .south]))
        #expect(held.state.buttons == .a, "neither l nor backward: those controls are enable and stop")
        #expect(held.enableHeld == true)
        #expect(held.stopHeld)
        let released = m.map(PadSnapshot())
        #expect(released.enableHeld == false)
        #expect(!released.stopHeld)
        #expect(mapping.map(PadSnapshot()).enableHeld == nil)
    }

    @Test func stickDirectionsAsControls() {
        var m = mapping
        m.bindings = [.init(.forward, [.stick(.leftY, positive: false)])]
        #expect(state([.leftY: -0.6], mapping: m).buttons == .forward)
        #expect(state([.leftY: 0.6], mapping: m).buttons == [])
        #expect(state([.leftY: -0.4], mapping: m).buttons == [])
    }

    @Test func neutralInputMeansNoDriveBitAndCentredStick() {
        #expect(mapping.map(PadSnapshot(axes: [.leftX: 0.04], buttons: [.south])).isNeutral)
        #expect(!mapping.map(PadSnapshot(axes: [.leftX: 0.06])).isNeutral)
        #expect(!mapping.map(PadSnapshot(buttons: [.dpadUp])).isNeutral)
        var m = mapping
        m.deadzone = 0
        #expect(m.map(PadSnapshot(axes: [.leftX: 0.01])).isNeutral, "a zero deadzone still allows a resting stick")
    }

    @Test func controlNamesRoundTrip() {
        for name in PadControl.allNames {
            #expect(PadControl(name: name)?.name == name)
        }
        #expect(PadControl(name: "DPUP") == .button(.dpadUp))
        #expect(PadControl(name: "lefttrigger+") == nil)
        #expect(PadControl(name: "a") == nil, "face buttons are positional: south/east/west/north")
        #expect(PadControl(name: "leftx") == nil, "a stick needs a direction")
    }
}
