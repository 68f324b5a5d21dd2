#if canImport(Glibc)
import Glibc
#endif
import Gamepad
import RemoteWire
import Testing

/// SDL virtual joysticks → GamepadSource → UDP packets. SDL is process-global, so these run
/// one at a time; every SDL call happens on the source's own thread.
@Suite(.serialized) struct GamepadSourceTests {
    static let neutral = "0000000000000000"
    /// π/4 as binary32 (0x3F490FDB) with no buttons, and its negative.
    static let right = "3f490fdb00000000"
    static let left = "bf490fdb00000000"
    static let forward = "0000000000000001"

    @Test func startedWithoutAPadSendsNeutralSaysSoAndKeepsWaiting() throws {
        let rig = try PadRig()
        #expect(try rig.waitForPackets(1))
        #expect(rig.packets == [Self.neutral])
        #expect(rig.status?.isNoGamepad == true)
        #expect(rig.status.map { "\($0)" }?.hasPrefix("no gamepad") == true)
        #expect(rig.notices.contains { $0.hasPrefix("waiting for a gamepad") })
        // Still alive and looking: a pad plugged in later is taken.
        let pad = try rig.attach()
        #expect(try rig.waitForStatus { if case .driving(let p) = $0 { p.instanceID == pad.instanceID && p.name == rig.padName } else { false } })
        #expect(rig.notices.contains { $0.hasPrefix("gamepad connected: \"\(rig.padName)\"") })
        #expect(rig.packets == [Self.neutral], "a pad at rest sends nothing new")
    }

    @Test func stickAndButtonsBecomeExactPackets() throws {
        let rig = try PadRig()
        let pad = try rig.attach()
        #expect(try rig.waitForStatus(\.isDriving))

        let steps: [(axes: [PadAxis: Int16], buttons: [PadButton: Bool], packet: String)] = [
            ([.leftX: 32767], [:], Self.right),
            ([.leftX: -32768], [:], Self.left),
            ([.leftX: 1638], [:], Self.neutral),                 // 0.04999: inside the deadzone
            ([.leftX: 0], [.dpadUp: true], Self.forward),
            ([:], [.dpadUp: false, .dpadDown: true], "0000000000000002"),
            ([:], [.dpadDown: false, .south: true], "0000000000000004"),
            ([:], [.south: false, .east: true], "0000000000000008"),
            ([:], [.east: false, .west: true, .north: true], "0000000000000030"),
            ([:], [.west: false, .north: false, .leftShoulder: true, .rightShoulder: true], "00000000000000c0"),
            ([:], [.leftShoulder: false, .rightShoulder: false, .start: true, .back: true, .guide: true], "0000000000000700"),
            ([:], [.start: false, .back: false, .guide: false, .leftStick: true, .rightStick: true], "0000000000001800"),
            ([:], [.leftStick: false, .rightStick: false, .dpadLeft: true, .dpadRight: true], "0000000000006000"),
            ([.rightTrigger: VirtualPad.raw(trigger: 1)], [.dpadLeft: false, .dpadRight: false], Self.forward),
            ([.rightTrigger: 0], [:], Self.neutral),             // raw 0 = 16383 of 32767: not past half
            ([.rightTrigger: 1], [:], Self.forward),              // 16384: past half
            ([.rightTrigger: -32768, .leftTrigger: 32767], [:], "0000000000000002"),
            ([.leftTrigger: -32768, .leftX: 32767], [.south: true], "3f490fdb00000004"),
        ]
        for (i, step) in steps.enumerated() {
            try rig.source.updateVirtualPad(pad, axes: step.axes, buttons: step.buttons)
            #expect(try rig.waitForPackets(i + 2), "step \(i)")
            #expect(rig.packets.last == step.packet, "step \(i)")
        }
        #expect(rig.packets == [Self.neutral] + steps.map(\.packet), "one packet per change, nothing else")
        #expect(Hex.string(StatePacket.encode(rig.source.state)) == steps.last?.packet)
        #expect(rig.source.status?.isDriving == true)
    }

    @Test func stickOutsideTheDeadzoneIsRescaled() throws {
        let rig = try PadRig()
        let pad = try rig.attach()
        #expect(try rig.waitForStatus(\.isDriving))
        try rig.source.updateVirtualPad(pad, axes: [.leftX: -16384])
        #expect(try rig.waitForPackets(2))
        let state = try StatePacket.decode(try #require(Hex.bytes(rig.packets[1])))
        let expected = -(16384.0 / 32767 - 0.05) / 0.95 * Double.pi / 4
        #expect(abs(Double(state.angle) - expected) < 1e-6)
        #expect(state.buttons == [])
    }

    @Test func deadmanHoldsTheStateAtNeutral() throws {
        var config = GamepadConfig()
        config.mapping.enable = .button(.leftShoulder)
        let rig = try PadRig(config: config)
        let pad = try rig.attach()
        #expect(try rig.waitForStatus(\.isEnableNotHeld))
        try rig.source.updateVirtualPad(pad, axes: [.leftX: 32767], buttons: [.dpadUp: true])
        try rig.source.updateVirtualPad(pad, buttons: [.leftShoulder: true])
        #expect(try rig.waitForPackets(2))
        try rig.source.updateVirtualPad(pad, buttons: [.leftShoulder: false])
        #expect(try rig.waitForPackets(3))
        #expect(rig.packets == [Self.neutral, "3f490fdb00000001", Self.neutral],
                "nothing moved before the deadman was held; the shoulder's l bit is never sent")
        #expect(rig.status?.isEnableNotHeld == true)
    }

    @Test func unplugIsNeutralAtOnceAndReplugResumesOnlyAfterNeutral() throws {
        let rig = try PadRig()
        let first = try rig.attach()
        #expect(try rig.waitForStatus(\.isDriving))
        try rig.source.updateVirtualPad(first, axes: [.rightTrigger: 32767, .leftX: 32767])
        #expect(try rig.waitForPackets(2))

        try rig.source.detachVirtualPad(first)
        #expect(try rig.waitForPackets(3))
        #expect(try rig.waitForStatus(\.isNoGamepad))
        #expect(rig.notices.contains { $0.hasPrefix("gamepad lost") })

        // Plugged back in with the trigger held and the stick over: no motion.
        let second = try rig.attach(suffix: " again", axes: [.rightTrigger: 32767, .leftX: 32767])
        #expect(try rig.waitForStatus(\.isWaitingForNeutral))
        try rig.source.updateVirtualPad(second, axes: [.leftX: 0])
        try rig.source.updateVirtualPad(second, axes: [.leftX: 32767])
        try rig.source.updateVirtualPad(second, axes: [.rightTrigger: -32768, .leftX: 0])
        #expect(try rig.waitForStatus(\.isDriving))
        try rig.source.updateVirtualPad(second, axes: [.rightTrigger: 32767])
        #expect(try rig.waitForPackets(4))
        #expect(rig.packets == [Self.neutral, "3f490fdb00000001", Self.neutral, Self.forward])
        try rig.source.detachVirtualPad(second)
        #expect(try rig.waitForPackets(5))
        #expect(rig.packets.last == Self.neutral)
    }

    @Test func stopLatchesThroughOneReleaseAndClearsOnTheSecond() throws {
        var config = GamepadConfig()
        config.mapping.stop = .button(.guide)
        let rig = try PadRig(config: config)
        let pad = try rig.attach()
        #expect(try rig.waitForStatus(\.isDriving))
        try rig.source.updateVirtualPad(pad, buttons: [.dpadUp: true])
        #expect(try rig.waitForPackets(2))
        try rig.source.updateVirtualPad(pad, buttons: [.guide: true])
        #expect(try rig.waitForPackets(3))
        #expect(rig.status?.isStopped == true)
        try rig.source.updateVirtualPad(pad, buttons: [.guide: false])
        try rig.source.updateVirtualPad(pad, buttons: [.guide: true])
        try rig.source.updateVirtualPad(pad, buttons: [.guide: false])
        #expect(try rig.waitForStatus(\.isWaitingForNeutral), "unlatched, but d-pad up is still held")
        try rig.source.updateVirtualPad(pad, buttons: [.dpadUp: false])
        #expect(try rig.waitForStatus(\.isDriving))
        try rig.source.updateVirtualPad(pad, buttons: [.dpadUp: true])
        #expect(try rig.waitForPackets(4))
        #expect(rig.packets == [Self.neutral, Self.forward, Self.neutral, Self.forward])
    }

    @Test func selectorsPickTheRightPadAndAPadWithoutMappingIsNotDriven() throws {
        let rig = try PadRig()
        let stick = try rig.source.attachVirtualPad(name: rig.padName + " stick", gameController: false)
        #expect(try rig.waitForStatus { if case .noGamepad(_, .noMapping(let p)) = $0 { p.instanceID == stick.instanceID } else { false } })
        let pads = try rig.source.pads()
        let listed = try #require(pads.first { $0.instanceID == stick.instanceID })
        #expect(!listed.hasMapping)
        #expect(listed.guid.count == 32 && listed.guid.allSatisfy(\.isHexDigit))
        let pad = try rig.attach(suffix: " pad")
        #expect(try rig.waitForStatus { if case .driving(let p) = $0 { p.instanceID == pad.instanceID } else { false } })
        let info = try #require(try rig.source.pads().first { $0.instanceID == pad.instanceID })
        #expect(info.hasMapping && info.name == rig.padName + " pad")
        try rig.source.detachVirtualPad(stick)
        try rig.source.detachVirtualPad(pad)
        #expect(try rig.waitForStatus(\.isNoGamepad))
    }

    @Test func selectByGUIDAndIndex() throws {
        // Learn the GUID and index of a virtual pad, then select it by each.
        // (A virtual pad's GUID is made from its name, so the same name gives the same GUID.)
        let name = "ARTest-\(UInt32.random(in: 0...UInt32.max))"
        let info: PadInfo
        do {
            let probe = try PadRig()
            let pad = try probe.source.attachVirtualPad(name: name)
            info = try #require(try probe.source.pads().first { $0.instanceID == pad.instanceID })
        }
        let withoutChecksum = String(info.guid.prefix(4) + "0000" + info.guid.dropFirst(8))
        for selector in [GamepadSelector.guid(info.guid.uppercased()), .guid(withoutChecksum), .index(info.index)] {
            let rig = try PadRig(selector: selector)
            let pad = try rig.source.attachVirtualPad(name: name)
            #expect(try rig.waitForStatus { if case .driving(let p) = $0 { p.instanceID == pad.instanceID } else { false } }, "\(selector)")
        }
        let other = try PadRig(selector: .guid(String(repeating: "0", count: 32)))
        _ = try other.source.attachVirtualPad(name: name)
        #expect(try other.waitForStatus { if case .noGamepad(_, .noMatch) = $0 { true } else { false } })
    }

    /// SDL installs its own SIGINT/SIGTERM handlers unless told not to; they would turn Ctrl-C
    /// into an SDL_QUIT event nobody reads, and the controller would never stop.
    @Test func sdlLeavesSignalHandlersAlone() throws {
        func handler(_ sig: Int32) -> UnsafeMutableRawPointer? {
            var action = sigaction()
            sigaction(sig, nil, &action)
            return unsafeBitCast(action.__sigaction_handler.sa_handler, to: UnsafeMutableRawPointer?.self)
        }
        let before = [SIGINT, SIGTERM].map(handler)
        let rig = try PadRig()
        #expect(try rig.waitForPackets(1), "SDL is up")
        #expect([SIGINT, SIGTERM].map(handler) == before)
    }

    @Test func oneSourceAtATime() throws {
        let rig = try PadRig()
        #expect(throws: GamepadError.busy) { try GamepadSource(.init()) }
        #expect(throws: GamepadError.busy) { try GamepadCatalog.list() }
        rig.source.close()
        #expect(throws: GamepadError.closed) { try rig.source.pads() }
        #expect(throws: GamepadError.closed) { try rig.source.attachVirtualPad(name: "late") }
        // SDL is free again afterwards.
        let pads = try GamepadCatalog.list(hints: PadRig.testHints, virtualPads: ["ARTest catalog"])
        let listed = try #require(pads.first { $0.name == "ARTest catalog" })
        #expect(listed.hasMapping)
    }

    @Test func aConfigMappingLineMakesAnUnknownJoystickAGamepad() throws {
        // Learn the GUID of an unmapped virtual stick, then add a mapping for it in the config.
        let name = "ARTest-\(UInt32.random(in: 0...UInt32.max)) stick"
        let probe: PadInfo
        do {
            let rig = try PadRig()
            let stick = try rig.source.attachVirtualPad(name: name, gameController: false)
            probe = try #require(try rig.source.pads().first { $0.instanceID == stick.instanceID })
        }
        #expect(!probe.hasMapping)
        // The GUID exactly as listed (with SDL's name checksum): the config clears the checksum.
        let line = "\(probe.guid),ARTest mapped stick,a:b0,b:b1,leftx:a0,lefty:a1,"
        let config = try GamepadConfig.parse("[gamepad]\nmappings = [\"\(line)\"]\n", file: "pad.toml")
        let rig = try PadRig(config: config, selector: .guid(probe.guid))
        let stick = try rig.source.attachVirtualPad(name: name, gameController: false)
        #expect(try rig.waitForStatus(\.isDriving), "\(rig.statuses)")
        try rig.source.updateVirtualPad(stick, axes: [.leftX: 32767], buttons: [.south: true])
        #expect(try rig.waitForPackets(2))
        #expect(rig.packets == [Self.neutral, "3f490fdb00000004"])
    }
}
