@testable import Controller
import PropertyBased
import RemoteWire
import Testing

@Suite struct TerminalInputDecoderTests {
    func decode(_ chunks: [[UInt8]]) -> [TerminalEvent] {
        var d = TerminalInputDecoder()
        var out: [TerminalEvent] = []
        for c in chunks {
            d.feed(c)
            while let e = d.next() { out.append(e) }
        }
        return out
    }

    func decode(_ text: String) -> [TerminalEvent] { decode([Array(text.utf8)]) }

    func press(_ key: Key, _ mods: KeyModifiers = []) -> TerminalEvent { .key(key, .press, mods) }

    @Test func plainKeysAndControlBytes() {
        #expect(decode("wW q\u{03}\u{04}\u{1C}") == [
            press(.character("w")), press(.character("W")), press(.character(" ")), press(.character("q")),
            press(.character("c"), .ctrl), press(.character("d"), .ctrl), press(.character("\\"), .ctrl),
        ])
    }

    @Test func legacyAndApplicationCursorKeys() {
        #expect(decode("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D\u{1B}OA\u{1B}OD") == [
            press(.up), press(.down), press(.right), press(.left), press(.up), press(.left),
        ])
        #expect(decode("\u{1B}[1;5C") == [press(.right, .ctrl)])
    }

    @Test func kittyKeysWithEventTypes() {
        #expect(decode("\u{1B}[119u\u{1B}[119;1:2u\u{1B}[119;1:3u") == [
            .key(.character("w"), .press, []), .key(.character("w"), .repeat, []), .key(.character("w"), .release, []),
        ])
        #expect(decode("\u{1B}[1;1:3D\u{1B}[1;1:2C") == [.key(.left, .release, []), .key(.right, .repeat, [])])
        #expect(decode("\u{1B}[99;5u") == [press(.character("c"), .ctrl)])
        #expect(decode("\u{1B}[97:65;2u") == [press(.character("a"), .shift)], "alternate key codes are ignored")
        #expect(decode("\u{1B}[32;1;32u") == [press(.character(" "))], "associated text is ignored")
        #expect(decode("\u{1B}[27u") == [press(.escape)])
        #expect(decode("\u{1B}[57399u") == [press(.other)])
    }

    @Test func flagsReplyFocusAndIgnoredSequences() {
        #expect(decode("\u{1B}[?11u") == [.keyboardFlags(11)])
        #expect(decode("\u{1B}[I\u{1B}[O") == [.focus(true), .focus(false)])
        #expect(decode("\u{1B}[?62;22c\u{1B}[>1;4000;0cw") == [press(.character("w"))], "device attributes are skipped")
        #expect(decode("\u{1B}[3~x") == [press(.character("x"))])
    }

    @Test func malformedAndOverlongSequencesAreDropped() {
        #expect(decode("\u{1B}[12\u{01}w") == [press(.character("1")), press(.character("2")), press(.character("a"), .ctrl), press(.character("w"))])
        let long = "\u{1B}[" + String(repeating: "1;", count: 40) + "w"
        #expect(decode(long).contains(press(.character("w"))))
    }

    @Test func aLoneEscapeWaitsThenReportsEscape() {
        var d = TerminalInputDecoder()
        d.feed([0x1B])
        #expect(d.next() == nil)
        #expect(d.pending == 1)
        d.feed(Array("x".utf8))
        #expect(d.next() == press(.escape))
        #expect(d.next() == press(.character("x")))
    }

    @Test func utf8Characters() {
        #expect(decode("é→") == [press(.character("é")), press(.character("→"))])
        #expect(decode([[0xFF, 0x77]]) == [press(.character("w"))], "an invalid byte is skipped")
    }

    /// Byte by byte, all at once and in random chunks: the same events.
    @Test func anyChunkingGivesTheSameEvents() async {
        let stream = Array("w\u{1B}[119;1:3u\u{1B}[A\u{1B}OC é\u{1B}[?11u\u{1B}[O\u{03}\u{1B}[1;1:3Dq".utf8)
        let whole = decode([stream])
        #expect(whole.count == 11)
        #expect(decode(stream.map { [$0] }) == whole)
        await propertyCheck(count: 200, input: Gen.int(in: 1...6).array(of: 1...30)) { sizes in
            var chunks: [[UInt8]] = []
            var i = 0, k = 0
            while i < stream.count {
                let n = min(sizes[k % sizes.count], stream.count - i)
                chunks.append(Array(stream[i..<i + n]))
                i += n
                k += 1
            }
            #expect(decode(chunks) == whole)
        }
    }

    /// Random bytes never crash the decoder or grow its buffer past the bound.
    @Test func randomBytesStayBounded() async {
        await propertyCheck(count: 300, input: Gen<UInt8>.value().array(of: 0...200)) { bytes in
            var d = TerminalInputDecoder()
            d.feed(bytes)
            while d.next() != nil {}
            #expect(d.pending <= TerminalInputDecoder.maximumSequence + 1)
        }
    }
}

@Suite struct KeyboardModelTests {
    let t0 = ContinuousClock.now
    func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }
    func press(_ c: Unicode.Scalar) -> TerminalEvent { .key(.character(c), .press, []) }

    /// `n` steps of full lock (π/4) / 4.
    func tilt(_ n: Int, quarters: Int = 4) -> Float { Float(Double(n) * 0.7853982 * Double(quarters) / 4 / 4) }

    @Test func latchedArrowsTiltInStepsAndSpaceStops() {
        var m = KeyboardModel(steering: .latch)
        for _ in 0..<3 { _ = m.handle(.key(.right, .press, []), now: at(0)) }
        #expect(m.state.angle == tilt(3))
        _ = m.handle(.key(.left, .repeat, []), now: at(0))
        #expect(m.state.angle == tilt(2))
        _ = m.handle(.key(.left, .release, []), now: at(0))
        #expect(m.state.angle == tilt(2), "a release does not tilt")
        m.expire(now: at(10_000))
        #expect(m.state.angle == tilt(2), "a latched tilt never lapses")
        _ = m.handle(press("w"), now: at(0))
        _ = m.handle(press(" "), now: at(1))
        #expect(m.state == .neutral, "space stops: centre and nothing held")
        _ = m.handle(.key(.right, .press, []), now: at(0))
        _ = m.handle(press("w"), now: at(2))
        _ = m.handle(press("0"), now: at(3))
        #expect(m.state == ControllerState(angle: 0, buttons: .forward), "0 centres only")
    }

    /// Full lock (the receiver's steering saturation) in four presses; never beyond it.
    @Test func tiltStopsAtFullLock() {
        for steering in KeyboardModel.Steering.allCases {
            var m = KeyboardModel(steering: steering)
            for i in 0..<40 { _ = m.handle(.key(.left, i == 0 ? .press : .repeat, []), now: at(i)) }
            #expect(m.state.angle == -0.7853982, "\(steering)")
        }
    }

    @Test func centreSteeringReturnsOnReleaseOrWhenTheKeyLapses() {
        var m = KeyboardModel()
        _ = m.handle(.key(.right, .press, []), now: at(0))
        #expect(m.state.angle == tilt(1))
        #expect(m.nextDeadline == at(700))
        _ = m.handle(.key(.right, .repeat, []), now: at(500))
        _ = m.handle(.key(.right, .repeat, []), now: at(530))
        #expect(m.state.angle == tilt(3))
        #expect(m.nextDeadline == at(730))
        m.expire(now: at(729))
        #expect(m.state.angle == tilt(3))
        m.expire(now: at(730))
        #expect(m.state == .neutral, "lapsed: back to centre")
        // The other way starts from centre.
        _ = m.handle(.key(.right, .press, []), now: at(800))
        _ = m.handle(.key(.right, .repeat, []), now: at(1300))
        _ = m.handle(.key(.left, .press, []), now: at(1310))
        #expect(m.state.angle == -tilt(1))
        // With release events: held until released, no timeout.
        #expect(m.handle(.keyboardFlags(11), now: at(1320)) == .releaseEventsDetected)
        m.expire(now: at(60_000))
        #expect(m.state.angle == -tilt(1))
        _ = m.handle(.key(.right, .release, []), now: at(60_001))
        #expect(m.state.angle == -tilt(1), "releasing the other key changes nothing")
        _ = m.handle(.key(.left, .release, []), now: at(60_002))
        #expect(m.state.angle == 0)
    }

    @Test func scaleKeysScaleTheTilt() {
        var m = KeyboardModel(steering: .latch)
        for _ in 0..<4 { _ = m.handle(.key(.right, .press, []), now: at(0)) }
        _ = m.handle(press("-"), now: at(0))
        #expect(m.state.angle == tilt(4, quarters: 3) && m.scaleQuarters == 3)
        for _ in 0..<5 { _ = m.handle(press("["), now: at(0)) }
        #expect(m.scaleQuarters == 1 && m.state.angle == tilt(4, quarters: 1))
        for _ in 0..<5 { _ = m.handle(press("+"), now: at(0)) }
        #expect(m.scaleQuarters == 4 && m.state.angle == 0.7853982)
    }

    @Test func ctrlZAsksToSuspend() {
        var m = KeyboardModel()
        #expect(m.handle(.key(.character("z"), .press, .ctrl), now: at(0)) == .suspend)
        #expect(m.handle(.key(.character("z"), .press, []), now: at(0)) == .none)
    }

    @Test func withoutReleaseEventsAHoldLastsUntilTheFirstRepeatThenFollowsRepeats() {
        var m = KeyboardModel()
        _ = m.handle(press("w"), now: at(0))
        #expect(m.state.buttons == .forward)
        #expect(m.nextDeadline == at(700))
        m.expire(now: at(699))
        #expect(m.state.buttons == .forward)
        _ = m.handle(press("w"), now: at(500))   // auto-repeat starts
        #expect(m.nextDeadline == at(700))
        _ = m.handle(press("w"), now: at(533))
        #expect(m.nextDeadline == at(733))
        m.expire(now: at(732))
        #expect(m.state.buttons == .forward)
        m.expire(now: at(733))
        #expect(m.state.buttons == [])
        #expect(m.nextDeadline == nil)
    }

    @Test func aTapLastsTheFirstHold() {
        var m = KeyboardModel()
        _ = m.handle(press("A"), now: at(0))
        _ = m.handle(.key(.down, .press, []), now: at(100))
        #expect(m.state.buttons == [.a, .backward])
        m.expire(now: at(700))
        #expect(m.state.buttons == .backward)
        m.expire(now: at(800))
        #expect(m.state.buttons == [])
    }

    @Test func kittyFlagsSwitchToReleaseEventsWithoutTimeout() {
        var m = KeyboardModel()
        _ = m.handle(press("w"), now: at(0))
        #expect(m.handle(.keyboardFlags(1), now: at(1)) == .none, "flag 2 (event types) is what matters")
        #expect(m.handle(.keyboardFlags(11), now: at(2)) == .releaseEventsDetected)
        #expect(m.nextDeadline == nil, "a key held before detection is held until released")
        _ = m.handle(press("b"), now: at(3))
        m.expire(now: at(60_000))
        #expect(m.state.buttons == [.forward, .b])
        _ = m.handle(.key(.character("w"), .release, []), now: at(60_001))
        #expect(m.state.buttons == .b)
    }

    @Test func aReleaseEventAloneAlsoSwitchesMode() {
        var m = KeyboardModel()
        _ = m.handle(.key(.character("w"), .press, []), now: at(0))
        #expect(m.handle(.key(.character("w"), .release, []), now: at(10)) == .releaseEventsDetected)
        #expect(m.state.buttons == [])
        _ = m.handle(.key(.up, .press, []), now: at(20))
        m.expire(now: at(5_000))
        #expect(m.state.buttons == .forward)
    }

    @Test func losingFocusReleasesHoldKeysButKeepsALatchedTilt() {
        var m = KeyboardModel(steering: .latch)
        _ = m.handle(.keyboardFlags(11), now: at(0))
        _ = m.handle(.key(.right, .press, []), now: at(0))
        _ = m.handle(press("w"), now: at(0))
        _ = m.handle(press("a"), now: at(0))
        _ = m.handle(.focus(false), now: at(1))
        #expect(m.state == ControllerState(angle: tilt(1), buttons: []))
        var centring = KeyboardModel()
        _ = centring.handle(.keyboardFlags(11), now: at(0))
        _ = centring.handle(.key(.right, .press, []), now: at(0))
        _ = centring.handle(.focus(false), now: at(1))
        #expect(centring.state == .neutral, "a held steering key is released too")
    }

    @Test(arguments: [
        TerminalEvent.key(.character("q"), .press, []), .key(.character("Q"), .press, .shift),
        .key(.character("c"), .press, .ctrl), .key(.character("d"), .press, .ctrl), .key(.character("\\"), .press, .ctrl),
    ])
    func quitKeys(event: TerminalEvent) {
        var m = KeyboardModel()
        #expect(m.handle(event, now: at(0)) == .quit)
    }

    @Test func otherCtrlKeysAndUnknownKeysDoNothing() {
        var m = KeyboardModel()
        for e: TerminalEvent in [.key(.character("w"), .press, .ctrl), .key(.character("x"), .press, []), .key(.escape, .press, []), .key(.other, .press, [])] {
            #expect(m.handle(e, now: at(0)) == .none)
        }
        #expect(m.state == .neutral)
    }
}
