import MIDIControl
import MIDIFraming
import RemoteWire
import Testing

/// A clock that moves only when the test says so, and a session driven by it.
final class SessionRig {
    let start = ContinuousClock.now
    private(set) var now: ContinuousClock.Instant
    var session: MIDISession
    /// Every event the session returned, in order.
    private(set) var log: [MIDIEvent] = []

    /// With `connect`, the device connects and its wheel reports the centre once (as a wheel
    /// moved from rest does: its first readings are near the centre), so the tests below may
    /// bend straight to any value.
    init(_ mapping: MIDIMapping = .standard, connect: Bool = true) {
        now = start
        session = MIDISession(mapping: mapping)
        if connect {
            handle(.connected("test keyboard"))
            if mapping.tilt == .pitchBend { play(bend(8192)) } else if case .controller(let n) = mapping.tilt { play([0xB0, n, 64]) }
        }
    }

    @discardableResult
    func handle(_ event: MIDISession.Event) -> [MIDIEvent] {
        let events = session.handle(event, at: now)
        log += events
        return events
    }

    /// Decodes `bytes` and feeds each message at the current time.
    @discardableResult
    func play(_ bytes: [UInt8]) -> [MIDIEvent] {
        var decoder = MIDIStreamDecoder()
        return decoder.decode(bytes).flatMap { handle(.message($0)) }
    }

    func advance(ms: Int) {
        now += .milliseconds(ms)
        if let due = session.nextDeadline, due <= now { handle(.tick) }
    }

    var output: ControllerState { session.output }
    var states: [ControllerState] { log.compactMap { if case .state(let s) = $0 { s } else { nil } } }
    var notices: [String] { log.compactMap { if case .notice(let n) = $0 { n } else { nil } } }
}

func note(_ name: String) -> UInt8 { MIDINote(name: name)!.number }
func on(_ name: String, _ velocity: UInt8 = 100, channel: UInt8 = 0) -> [UInt8] { [0x90 | channel, note(name), velocity] }
func off(_ name: String) -> [UInt8] { [0x80, note(name), 0x40] }
func bend(_ value: UInt16) -> [UInt8] { MIDIMessage.pitchBend(channel: 0, value: value).bytes }
let quarterPi = Float(Double.pi / 4)

@Suite struct MIDISessionKeys {
    @Test func aKeyHoldsItsButtonFromStrikeToRelease() {
        let rig = SessionRig()
        rig.play(on("C4"))
        #expect(rig.output == ControllerState(buttons: .forward))
        rig.play(on("E4"))
        #expect(rig.output == ControllerState(buttons: [.forward, .a]))
        rig.play([0x90, note("C4"), 0])        // velocity 0 = release
        #expect(rig.output == ControllerState(buttons: .a))
        rig.play(off("E4"))
        #expect(rig.output == .neutral)
        #expect(rig.states == [ControllerState(buttons: .forward), ControllerState(buttons: [.forward, .a]),
                               ControllerState(buttons: .a), .neutral])
    }

    @Test func padsAndBlackKeys() {
        let rig = SessionRig()
        rig.play(on("C2") + on("C#2") + on("D2") + on("D#2") + on("C#4") + on("A#4"))
        #expect(rig.output.buttons == [.forward, .backward, .a, .b, .start, .right])
    }

    @Test func anUnboundKeyDoesNothingButIsShown() {
        let rig = SessionRig()
        rig.play(on("D6"))
        #expect(rig.output == .neutral)
        #expect(rig.session.status.description == "test keyboard: D6 —")
    }

    @Test func theStatusNamesTheHeldKeysAndWhatTheyMean() {
        let rig = SessionRig()
        #expect(rig.session.status.description == "test keyboard: no keys held")
        rig.play(on("C4") + on("F#4") + bend(16383))
        #expect(rig.session.status.description == "test keyboard: C4 forward · F#4 home · tilt +0.79")
    }

    @Test func otherChannelsAreIgnoredWhenAChannelIsSet() {
        var mapping = MIDIMapping.standard
        mapping.channel = 9
        let rig = SessionRig(mapping)
        rig.play(on("C2", channel: 0))
        #expect(rig.output == .neutral)
        rig.play(on("C2", channel: 9))
        #expect(rig.output.buttons == .forward)
    }
}

@Suite struct MIDISessionTilt {
    @Test func theBendWheelTiltsWithinFullLock() {
        let rig = SessionRig()
        rig.play(bend(16383))
        #expect(rig.output.angle == quarterPi)
        rig.play(bend(0))
        #expect(rig.output.angle == -quarterPi)
        rig.play(bend(8192))
        #expect(rig.output.angle.bitPattern == 0)
    }

    @Test func aControllerCanTiltWith64AsTheCentre() {
        var mapping = MIDIMapping.standard
        mapping.tilt = .controller(1)
        mapping.deadzone = 0
        let rig = SessionRig(mapping)
        rig.play(bend(16383))
        #expect(rig.output.angle == 0)
        rig.play([0xB0, 1, 127])
        #expect(rig.output.angle == quarterPi)
        rig.play([0xB0, 1, 0])
        #expect(rig.output.angle == -quarterPi)
        rig.play([0xB0, 1, 64])
        #expect(rig.output.angle == 0)
    }

    @Test func fullLockIsClampedToTheWiresLimit() {
        var mapping = MIDIMapping.standard
        mapping.fullLockAngle = .pi      // beyond what the config allows: the clamp still holds
        let rig = SessionRig(mapping)
        rig.play(bend(0))
        #expect(rig.output.angle == -ControllerState.maxAngle)
    }

    @Test func invertedTilt() {
        var mapping = MIDIMapping.standard
        mapping.invertTilt = true
        let rig = SessionRig(mapping)
        rig.play(bend(16383))
        #expect(rig.output.angle == -quarterPi)
    }

    @Test func velocityScalesTheTiltOnlyWhenAsked() {
        var mapping = MIDIMapping.standard
        mapping.velocityScalesTilt = true
        let rig = SessionRig(mapping)
        rig.play(bend(16383))
        #expect(rig.output.angle == quarterPi)            // no drive key: unscaled
        rig.play(on("C4", 127))
        #expect(rig.output.angle == quarterPi)
        rig.play(off("C4") + on("C4", 32))
        #expect(rig.output == ControllerState(angle: Float(1.0 * 32 / 127 * Double(quarterPi)), buttons: .forward))
        let plain = SessionRig()
        plain.play(bend(16383) + on("C4", 32))
        #expect(plain.output.angle == quarterPi)
    }

    @Test func goldenBendVectorsGiveTheirAngles() throws {
        let vectors = try MIDIInputVectorsLoader.load()
        for v in vectors {
            let rig = SessionRig()
            rig.play(v.bytes)
            #expect(rig.output.angle.bitPattern == v.angleBits, "\(v.value)")
            #expect(MIDIMapping.standard.angle(fraction: PitchBend.normalized(UInt16(v.value))).bitPattern == v.angleBits)
        }
    }
}

@Suite struct MIDISessionChords {
    @Test func aTriadStruckTogetherIsItsButtonsAtOnceWhenComplete() {
        let rig = SessionRig()
        rig.play(on("C3"))
        #expect(rig.output == .neutral)
        #expect(rig.session.status.description == "test keyboard: C3 …")
        rig.advance(ms: 10)
        rig.play(on("E3"))
        rig.advance(ms: 10)
        rig.play(on("G3"))                        // complete, and no bigger chord: decided now
        #expect(rig.output.buttons == [.a, .b])
        #expect(rig.session.status.description == "test keyboard: C3+E3+G3 a+b")
        rig.play(off("E3"))                       // one key up ends the chord…
        #expect(rig.output == .neutral)
        #expect(rig.session.status.description == "test keyboard: C3 — · G3 —")
        rig.play(on("E3"))                        // …and the rest set nothing until released
        rig.advance(ms: 31)
        #expect(rig.output == .neutral)
    }

    @Test func keysStruckTooFarApartAreNotAChord() {
        var mapping = MIDIMapping.standard
        mapping.notes[MIDINote(name: "C3")!] = .x
        let rig = SessionRig(mapping)
        rig.play(on("C3"))
        rig.advance(ms: 29)
        #expect(rig.output == .neutral)            // still inside the window
        rig.advance(ms: 1)
        #expect(rig.output.buttons == .x)          // window over: C3 acts alone
        rig.play(on("E3") + on("G3"))
        rig.advance(ms: 30)
        #expect(rig.output.buttons == .x)          // E3, G3 have no meaning alone
        #expect(!rig.output.buttons.contains(.a))
    }

    @Test func aPartOfAChordActsAloneWhenTheWindowCloses() {
        var mapping = MIDIMapping.standard
        mapping.notes[MIDINote(name: "E3")!] = .y
        let rig = SessionRig(mapping)
        rig.play(on("C3") + on("E3"))
        #expect(rig.output == .neutral)
        rig.advance(ms: 30)
        #expect(rig.output.buttons == .y)
    }

    @Test func aChordCanUseAChosenWindow() {
        var mapping = MIDIMapping.standard
        mapping.chordWindow = .milliseconds(100)
        let rig = SessionRig(mapping)
        rig.play(on("C3"))
        rig.advance(ms: 60)
        rig.play(on("E3"))
        rig.advance(ms: 30)
        rig.play(on("G3"))
        #expect(rig.output.buttons == [.a, .b])
    }

    @Test func aKeyReleasedInsideTheWindowSpoilsTheChord() {
        let rig = SessionRig()
        rig.play(on("C3") + on("E3") + off("C3") + on("G3"))
        rig.advance(ms: 30)
        #expect(rig.output == .neutral)
    }

    @Test func keysInNoChordActAtOnceWhileAWindowIsOpen() {
        let rig = SessionRig()
        rig.play(on("C3") + on("C4"))
        #expect(rig.output.buttons == .forward)
        rig.play(on("E3") + on("G3"))
        #expect(rig.output.buttons == [.forward, .a, .b])
    }
}

@Suite struct MIDISessionSafety {
    @Test func aFirstWheelReadingNearTheCentreArmsTheTilt() {
        let rig = SessionRig(connect: false)
        rig.handle(.connected("test keyboard"))
        rig.play(on("C4"))
        #expect(rig.output.buttons == .forward)     // keys drive at once after connecting
        rig.play(bend(8300) + bend(16383))          // a wheel moved from rest
        #expect(rig.output == ControllerState(angle: quarterPi, buttons: .forward))
    }

    @Test func afterAllNotesOffAHeldOverWheelMustComeBackToTheCentre() {
        let rig = SessionRig()
        rig.play(bend(16383) + [0xB0, 123, 0])
        #expect(rig.output == .neutral)
        rig.play(bend(16000))                       // still held over: not driving
        #expect(rig.output == .neutral)
        rig.play(bend(8192) + bend(16000))
        #expect(rig.output.angle > 0)
    }

    @Test func allNotesOffAndAllSoundOffAreNeutralAtOnce() {
        for controller: UInt8 in [123, 120, 124, 127] {
            let rig = SessionRig()
            rig.play(on("C4") + on("E4") + bend(16383))
            #expect(rig.output != .neutral)
            rig.play([0xB0, controller, 0])
            #expect(rig.output == .neutral, "CC \(controller)")
            rig.play(off("C4"))                    // a late release changes nothing
            #expect(rig.output == .neutral)
        }
    }

    @Test func systemResetIsNeutral() {
        let rig = SessionRig()
        rig.play(on("C4") + [0xFF])
        #expect(rig.output == .neutral)
    }

    @Test func unpluggingIsNeutralAtOnceAndForgetsHeldKeys() {
        let rig = SessionRig()
        rig.play(on("C4") + bend(16383))
        rig.handle(.disconnected("test keyboard: the device hung up"))
        #expect(rig.output == .neutral)
        #expect(rig.session.status.description == "test keyboard unplugged — sending neutral, waiting for it")
        rig.play(on("D4"))                         // nothing is heard from a device that is gone
        #expect(rig.output == .neutral)
        rig.handle(.connected("test keyboard"))
        rig.play(off("C4"))                        // the old key's release, late: nothing
        #expect(rig.output == .neutral)
        rig.play(on("D4"))
        #expect(rig.output.buttons == .backward)
        #expect(rig.notices.contains("test keyboard: the device hung up: sending neutral"))
    }

    @Test func aReconnectedDeviceSendingAnOffCentreWheelWaitsForTheCentre() {
        let rig = SessionRig()
        rig.play(bend(12000))
        #expect(rig.output.angle > 0)
        rig.handle(.disconnected("gone"))
        rig.handle(.connected("test keyboard"))
        rig.play(bend(16383))
        #expect(rig.output == .neutral)
        #expect(rig.session.status.phase == .waitingForNeutral)
        rig.play(on("C4"))
        #expect(rig.output == .neutral)
        rig.play(bend(8192))                        // centred, but forward is held: still waiting
        #expect(rig.output == .neutral)
        rig.play(off("C4"))
        #expect(rig.session.status.phase == .driving)
        rig.play(on("C4") + bend(16383))
        #expect(rig.output == ControllerState(angle: quarterPi, buttons: .forward))
    }

    @Test func theSustainPedalAsDeadman() {
        var mapping = MIDIMapping.standard
        mapping.deadman = .sustain
        let rig = SessionRig(mapping)
        rig.play(on("C4"))
        #expect(rig.output == .neutral)
        #expect(rig.session.status.description == "test keyboard: hold the sustain pedal to drive · C4 forward")
        rig.play([0xB0, 64, 127])
        #expect(rig.output.buttons == .forward)
        rig.play([0xB0, 64, 0])
        #expect(rig.output == .neutral)
        rig.play([0xB0, 64, 100])
        #expect(rig.output.buttons == .forward)    // holding it again drives at once
        rig.play([0xB0, 121, 0])                   // reset all controllers lifts the pedal
        #expect(rig.output == .neutral)
    }

    @Test func aKeyAsDeadmanSetsNoButtonOfItsOwn() {
        var mapping = MIDIMapping.standard
        mapping.deadman = .note(MIDINote(name: "C4")!)
        let rig = SessionRig(mapping)
        rig.play(on("E4"))
        #expect(rig.output == .neutral)
        rig.play(on("C4"))
        #expect(rig.output.buttons == .a)          // not forward: C4 is the deadman now
        rig.play(off("C4"))
        #expect(rig.output == .neutral)
    }

    @Test func activeSensingSilenceReleasesEverything() {
        let rig = SessionRig()
        rig.play([0xFE] + on("C4"))
        #expect(rig.output.buttons == .forward)
        rig.advance(ms: 200)
        rig.play([0xFE])
        rig.advance(ms: 299)
        #expect(rig.output.buttons == .forward)
        rig.advance(ms: 1)
        #expect(rig.output == .neutral)
        #expect(rig.notices.last?.contains("no active sensing") == true)
    }

    @Test func withoutActiveSensingSilenceIsFine() {
        let rig = SessionRig()
        rig.play(on("C4"))
        rig.advance(ms: 10_000)
        #expect(rig.output.buttons == .forward)
        #expect(rig.session.nextDeadline == nil)
    }

    @Test func lostEventsReleaseEverything() {
        let rig = SessionRig()
        rig.play(on("C4"))
        rig.handle(.lost("overflow"))
        #expect(rig.output == .neutral)
    }

    @Test func beforeAnyDeviceTheOutputIsNeutral() {
        let rig = SessionRig(connect: false)
        rig.play(on("C4"))
        #expect(rig.output == .neutral)
        #expect(rig.session.status.description == "no MIDI device yet")
    }
}
