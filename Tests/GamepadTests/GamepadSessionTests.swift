import Gamepad
import RemoteWire
import Testing

/// The hot-plug and safety state machine, driven with made-up instants (no SDL, no sleeping).
@Suite struct GamepadSessionTests {
    let t0 = ContinuousClock.now
    let pad = PadInfo(index: 0, name: "Test Pad", guid: "ff000000000000000000000000000000", hasMapping: true, instanceID: 1)
    let other = PadInfo(index: 0, name: "Other Pad", guid: "ff000000000000000000000000000001", hasMapping: true, instanceID: 2)
    let quarterPi = Float(Double.pi / 4)

    func reading(_ axes: [PadAxis: Double] = [:], _ buttons: Set<PadButton> = [], mapping: GamepadMapping = .standard) -> MappedInput {
        mapping.map(PadSnapshot(axes: axes, buttons: buttons))
    }

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int64(seconds * 1000)) }

    static func states(_ events: [GamepadEvent]) -> [ControllerState] {
        events.compactMap { if case .state(let s) = $0 { s } else { nil } }
    }

    static func statuses(_ events: [GamepadEvent]) -> [GamepadStatus] {
        events.compactMap { if case .status(let s) = $0 { s } else { nil } }
    }

    static func notices(_ events: [GamepadEvent]) -> [String] {
        events.compactMap { if case .notice(let s) = $0 { s } else { nil } }
    }

    @Test func startsNeutralAndWaitsForAPadSayingSo() {
        var session = GamepadSession(selector: .first, mapping: .standard)
        let first = session.handle(.unavailable(.nothingConnected), at: at(0))
        #expect(Self.states(first) == [.neutral])
        #expect(Self.statuses(first) == [.noGamepad(.first, .nothingConnected)])
        #expect("\(Self.statuses(first)[0])" == "no gamepad — waiting for one (any gamepad)")
        #expect(Self.notices(first).count == 1 && Self.notices(first)[0].hasPrefix("waiting for a gamepad"))
        #expect(session.pad == nil)
        #expect(session.nextDeadline == at(30))
    }

    @Test func remindsEveryIntervalWhileWaitingAndNeverGivesUp() {
        var session = GamepadSession(selector: .first, mapping: .standard, reminderInterval: .seconds(30))
        _ = session.start(at: at(0))
        #expect(Self.notices(session.handle(.tick, at: at(29.9))).isEmpty)
        let reminder = Self.notices(session.handle(.tick, at: at(30)))
        #expect(reminder == ["still no gamepad after 30 s: no gamepad — waiting for one (any gamepad)"])
        #expect(session.nextDeadline == at(60))
        // A late tick (the loop was busy) schedules the next one in the future, not a burst.
        _ = session.handle(.tick, at: at(95))
        #expect(session.nextDeadline == at(120))
        #expect(session.output == .neutral)
        _ = session.handle(.connected(pad, reading()), at: at(100))
        #expect(session.nextDeadline == nil, "no reminders while a pad is there")
    }

    @Test func aPadAtRestDrivesAtOnce() {
        var session = GamepadSession(selector: .first, mapping: .standard)
        _ = session.start(at: at(0))
        let connected = session.handle(.connected(pad, reading()), at: at(1))
        #expect(Self.states(connected).isEmpty, "still neutral: nothing new to send")
        #expect(Self.statuses(connected) == [.driving(pad)])
        let moved = session.handle(.input(reading([.leftX: 1], [.dpadUp])), at: at(1.1))
        #expect(Self.states(moved) == [ControllerState(angle: quarterPi, buttons: .forward)])
    }

    @Test func unplugIsNeutralAtOnceAndReplugResumesOnlyAfterNeutral() {
        var session = GamepadSession(selector: .first, mapping: .standard)
        _ = session.start(at: at(0))
        _ = session.handle(.connected(pad, reading()), at: at(1))
        _ = session.handle(.input(reading([.rightTrigger: 1])), at: at(2))
        #expect(session.output == ControllerState(buttons: .forward))

        let lost = session.handle(.disconnected, at: at(3))
        #expect(lost.first == .state(.neutral), "neutral is the first thing out")
        #expect(Self.statuses(lost) == [.noGamepad(.first, .nothingConnected)])
        #expect(Self.notices(lost).contains { $0.hasPrefix("gamepad lost: \"Test Pad\"") })

        // Plugged back with the trigger still held, stick over: nothing moves.
        let back = session.handle(.connected(pad, reading([.leftX: 0.8, .rightTrigger: 1])), at: at(4))
        #expect(Self.states(back).isEmpty)
        #expect(Self.statuses(back) == [.waitingForNeutral(pad)])
        #expect(Self.states(session.handle(.input(reading([.leftX: 0.8])), at: at(4.1))).isEmpty, "stick still over")
        #expect(Self.states(session.handle(.input(reading([.rightTrigger: 1])), at: at(4.2))).isEmpty, "trigger still held")
        let neutral = session.handle(.input(reading([.leftX: 0.03])), at: at(4.3))
        #expect(Self.states(neutral).isEmpty)
        #expect(Self.statuses(neutral) == [.driving(pad)])
        #expect(Self.states(session.handle(.input(reading([.rightTrigger: 1])), at: at(4.4))) == [ControllerState(buttons: .forward)])
    }

    @Test func anotherPadAlsoHasToBeNeutralFirst() {
        var session = GamepadSession(selector: .first, mapping: .standard)
        _ = session.handle(.connected(pad, reading()), at: at(0))
        _ = session.handle(.input(reading([.leftX: -1])), at: at(1))
        _ = session.handle(.disconnected, at: at(2))
        let swapped = session.handle(.connected(other, reading([.leftX: -1])), at: at(3))
        #expect(Self.statuses(swapped) == [.waitingForNeutral(other)])
        #expect(session.output == .neutral)
        _ = session.handle(.input(reading()), at: at(3.5))
        #expect(Self.states(session.handle(.input(reading([.leftX: -1])), at: at(4))) == [ControllerState(angle: -quarterPi)])
    }

    @Test func deadmanSendsNeutralWhileNotHeld() {
        var m = GamepadMapping.standard
        m.enable = .button(.rightShoulder)
        var session = GamepadSession(selector: .first, mapping: m)
        let start = session.handle(.connected(pad, reading(mapping: m)), at: at(0))
        #expect(Self.statuses(start) == [.enableNotHeld(pad, enable: .button(.rightShoulder))])
        #expect("\(Self.statuses(start)[0])" == "gamepad \"Test Pad\" (index 0): hold rightshoulder to drive")
        #expect(Self.states(session.handle(.input(reading([.leftX: 1], [.dpadUp], mapping: m)), at: at(1))).isEmpty)
        let held = session.handle(.input(reading([.leftX: 1], [.dpadUp, .rightShoulder], mapping: m)), at: at(2))
        #expect(Self.states(held) == [ControllerState(angle: quarterPi, buttons: .forward)], "no r bit: the deadman is consumed")
        let let_go = session.handle(.input(reading([.leftX: 1], [.dpadUp], mapping: m)), at: at(3))
        #expect(Self.states(let_go) == [.neutral])
        #expect(Self.statuses(let_go) == [.enableNotHeld(pad, enable: .button(.rightShoulder))])
    }

    @Test func stopLatchesUntilReleasedTwiceThenNeedsNeutral() {
        var m = GamepadMapping.standard
        m.stop = .button(.guide)
        var session = GamepadSession(selector: .first, mapping: m)
        _ = session.handle(.connected(pad, reading(mapping: m)), at: at(0))
        _ = session.handle(.input(reading([.rightTrigger: 1], mapping: m)), at: at(1))
        #expect(session.output == ControllerState(buttons: .forward))

        let pressed = session.handle(.input(reading([.rightTrigger: 1], [.guide], mapping: m)), at: at(2))
        #expect(pressed.first == .state(.neutral))
        #expect(Self.statuses(pressed) == [.stopped(pad, stop: .button(.guide), releasesLeft: 2)])
        // Release 1: still latched, though the trigger is held.
        let r1 = session.handle(.input(reading([.rightTrigger: 1], mapping: m)), at: at(3))
        #expect(Self.states(r1).isEmpty)
        #expect(Self.statuses(r1) == [.stopped(pad, stop: .button(.guide), releasesLeft: 1)])
        // Second press: still latched.
        #expect(Self.states(session.handle(.input(reading([.rightTrigger: 1], [.guide], mapping: m)), at: at(4))).isEmpty)
        // Release 2: unlatched, but the trigger is held, so it waits for neutral.
        let r2 = session.handle(.input(reading([.rightTrigger: 1], mapping: m)), at: at(5))
        #expect(Self.states(r2).isEmpty)
        #expect(Self.statuses(r2) == [.waitingForNeutral(pad)])
        #expect(Self.notices(r2).contains { $0.hasPrefix("stop released twice") })
        _ = session.handle(.input(reading(mapping: m)), at: at(6))
        #expect(Self.states(session.handle(.input(reading([.rightTrigger: 1], mapping: m)), at: at(7))) == [ControllerState(buttons: .forward)])
    }

    @Test func stopLatchSurvivesUnplugging() {
        var m = GamepadMapping.standard
        m.stop = .button(.guide)
        var session = GamepadSession(selector: .first, mapping: m)
        _ = session.handle(.connected(pad, reading(mapping: m)), at: at(0))
        _ = session.handle(.input(reading([:], [.guide], mapping: m)), at: at(1))
        _ = session.handle(.disconnected, at: at(2))
        let back = session.handle(.connected(other, reading(mapping: m)), at: at(3))
        #expect(Self.statuses(back) == [.stopped(other, stop: .button(.guide), releasesLeft: 2)])
        _ = session.handle(.input(reading([:], [.guide], mapping: m)), at: at(4))
        _ = session.handle(.input(reading(mapping: m)), at: at(5))   // release 1
        #expect(session.output == .neutral)
        _ = session.handle(.input(reading([:], [.guide], mapping: m)), at: at(6))
        let released = session.handle(.input(reading(mapping: m)), at: at(7))   // release 2
        #expect(Self.statuses(released) == [.driving(other)])
    }

    @Test func missesAreReportedOnceEach() {
        var session = GamepadSession(selector: .name("xbox"), mapping: .standard)
        _ = session.start(at: at(0))
        let unmapped = PadInfo(index: 0, name: "Xbox Flight", guid: "ff", hasMapping: false, instanceID: 3)
        let miss = session.handle(.unavailable(.noMapping(unmapped)), at: at(1))
        #expect(Self.statuses(miss) == [.noGamepad(.name("xbox"), .noMapping(unmapped))])
        #expect(Self.notices(miss).contains { $0.contains("has no SDL mapping") })
        #expect(session.handle(.unavailable(.noMapping(unmapped)), at: at(2)).isEmpty)
        #expect(session.output == .neutral)
    }
}
