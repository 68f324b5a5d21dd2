import Gamepad
import Testing

@Suite struct GamepadSelectorTests {
    @Test(arguments: [
        ("gamepad", GamepadSelector.first),
        ("gamepad:0", .index(0)),
        ("gamepad:12", .index(12)),
        ("gamepad:xbox", .name("xbox")),
        ("gamepad:Xbox 360 Controller", .name("Xbox 360 Controller")),
        ("gamepad:8BitDo", .name("8BitDo")),
        ("gamepad:030000005E0400008E02000014010000", .guid("030000005e0400008e02000014010000")),
        ("gamepad:030000005e0400008e0200001401000", .name("030000005e0400008e0200001401000")),
    ])
    func parses(text: String, expected: GamepadSelector) throws {
        #expect(try GamepadSelector(input: text) == expected)
    }

    @Test(arguments: ["keyboard", "stdin", "gamepads", "script:gamepad"])
    func otherInputsAreNotGamepads(text: String) throws {
        #expect(try GamepadSelector(input: text) == nil)
    }

    @Test(arguments: ["gamepad:", "gamepad:99999999999999999999999"])
    func refusesEmptyAndOverflowingSelectors(text: String) {
        #expect(throws: GamepadSelectorError.self) { try GamepadSelector(input: text) }
        do {
            _ = try GamepadSelector(input: text)
        } catch {
            #expect(error.description.contains("gamepad:INDEX"))
        }
    }

    let pads = [
        PadInfo(index: 0, name: "Flight Stick", guid: "0300000000000000000000000000aa00", hasMapping: false, instanceID: 5),
        PadInfo(index: 1, name: "Xbox 360 Controller", guid: "030000005e0400008e02000014010000", hasMapping: true, instanceID: 6),
        PadInfo(index: 2, name: "Xbox 360 Controller", guid: "030000005e0400008e02000014010000", hasMapping: true, instanceID: 7),
        PadInfo(index: 3, name: "PS4 Controller", guid: "050000004c050000cc09000000010000", hasMapping: true, instanceID: 8),
    ]

    @Test func firstSkipsPadsWithoutMapping() {
        #expect(GamepadSelector.first.choose(from: pads) == .success(pads[1]))
    }

    @Test func indexNameAndGuid() {
        #expect(GamepadSelector.index(3).choose(from: pads) == .success(pads[3]))
        #expect(GamepadSelector.name("ps4").choose(from: pads) == .success(pads[3]))
        #expect(GamepadSelector.name("XBOX").choose(from: pads) == .success(pads[1]), "first of identical pads")
        #expect(GamepadSelector.guid("030000005E0400008E02000014010000").choose(from: pads) == .success(pads[1]))
    }

    @Test func missesSayWhy() {
        #expect(GamepadSelector.first.choose(from: []) == .failure(.nothingConnected))
        #expect(GamepadSelector.index(9).choose(from: pads) == .failure(.noMatch(connected: pads)))
        #expect(GamepadSelector.name("flight").choose(from: pads) == .failure(.noMapping(pads[0])))
        #expect(GamepadSelector.index(0).choose(from: pads) == .failure(.noMapping(pads[0])))
        #expect(GamepadSelector.first.choose(from: [pads[0]]) == .failure(.noMapping(pads[0])))
    }
}
