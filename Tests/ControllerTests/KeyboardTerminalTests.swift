import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The keyboard UI driven through a pseudo-terminal, as a terminal emulator would: keys written
/// to the master, packets caught on loopback, the terminal's settings compared before and after.
@Suite(.serialized) struct KeyboardTerminalTests {
    let forward = StatePacket.encode(ControllerState(angle: 0, buttons: .forward))
    let forwardState = ControllerState(angle: 0, buttons: .forward)

    /// Starts `control` with no `--input` (a terminal on stdin means keyboard) and waits until it
    /// has put the terminal in raw mode and sent its first packet.
    /// (`--steer latch` unless `steer` says otherwise: most tests here are about keys and the
    /// terminal, and a latched tilt does not lapse.)
    func start(_ capture: PacketCapture, steer: String = "latch", environment: [String: String] = [:]) throws -> PtyChild {
        let child = try PtyChild(["control", "--plain", "--peer", capture.peer, "--steer", steer], environment: environment)
        #expect(child.waitUntil { child.inRawMode }, "raw mode; output: \(child.output)")
        #expect(try capture.waitFor(.neutral))
        return child
    }

    func expectRestored(_ child: PtyChild) {
        #expect(PtyChild.same(child.before, child.current), "terminal settings restored")
        #expect(child.current.c_lflag & tcflag_t(ECHO) != 0)
        #expect(child.waitUntil { child.output.contains("\u{1B}[?1004l\u{1B}[<u") }, "kitty flags popped, focus reports off")
    }

    /// The last three packets are neutral; with `after`, the one before them is that state (so
    /// the neutral ones are the way out, not a key that lapsed).
    func expectNeutralLast(_ capture: PacketCapture, after: ControllerState? = nil) throws {
        try capture.drain()
        let states = capture.states
        try #require(states.count >= 4)
        #expect(states.suffix(3).allSatisfy { $0 == .neutral }, "\(states.suffix(5))")
        if let after { #expect(states[states.count - 4] == after, "\(states.suffix(5))") }
    }

    /// The angle of `n` presses of → (full lock, π/4, in 4 steps).
    static func tilt(_ n: Int) -> Float { Float(Double(n) * 0.7853982 / 4) }
    let tilted = ControllerState(angle: tilt(1), buttons: [])

    @Test func keysBecomePacketsAndQuitRestoresTheTerminal() throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        #expect(child.waitUntil { child.output.contains("\u{1B}[>11u") }, "kitty flags pushed")
        #expect(child.waitUntil { child.output.contains("keyboard: ←/→ tilt (stays), 4 presses to full lock") }, "help line")

        child.send("\u{1B}[C\u{1B}[C")
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(2), buttons: [])))
        child.send("w")
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(2), buttons: .forward)))
        // No repeat follows: the hold lapses after its first-hold time (no release events here).
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(2), buttons: [])))
        child.send("\u{1B}[D\u{1B}[D\u{1B}[D ")
        #expect(try capture.waitFor(.neutral), "space stops: centred, nothing held")
        child.send("B")
        #expect(try capture.waitFor(ControllerState(angle: 0, buttons: .b)), "keys are case-insensitive")

        child.send("q")
        let end = child.wait()
        #expect(end?.reason == .exit && end?.status == 0)
        try expectNeutralLast(capture)
        expectRestored(child)
    }

    @Test func autoRepeatKeepsAKeyHeld() throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        child.send("s")
        #expect(try capture.waitFor(ControllerState(angle: 0, buttons: .backward)))
        // Auto-repeat about every 40 ms for 1.5 s, well past the first-hold time: the key stays held.
        let until = ContinuousClock.now + .milliseconds(1500)
        var during: [ControllerState] = []
        while ContinuousClock.now < until {
            child.send("s")
            let next = ContinuousClock.now + .milliseconds(40)
            while let p = try capture.next(timeout: next - .now) { during.append(try StatePacket.decode(p)) }
        }
        #expect(during.count > 30)
        #expect(during.allSatisfy { $0.buttons == .backward }, "released while repeating: \(during.filter { $0.buttons != .backward })")
        #expect(try capture.waitFor(.neutral), "released after the repeats stop")
        child.send("\u{03}")
        #expect(child.wait()?.status == 0, "Ctrl-C quits")
        try expectNeutralLast(capture)
        expectRestored(child)
    }

    @Test func kittyReleaseEventsHoldAKeyUntilItIsReleased() throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        #expect(child.waitUntil { child.output.contains("\u{1B}[?u") }, "flags queried")
        child.send("\u{1B}[?11u")   // the terminal's answer: event types on
        #expect(child.waitUntil { child.output.contains("reports key releases") })

        child.send("\u{1B}[119u")   // w pressed, never repeated
        #expect(try capture.waitFor(forwardState))
        // Held well past the 700 ms first-hold time: every packet meanwhile says forward.
        let until = ContinuousClock.now + .milliseconds(1200)
        while ContinuousClock.now < until {
            guard let p = try capture.next(timeout: .milliseconds(200)) else { continue }
            #expect(p == forward, "released without a release event")
        }
        child.send("\u{1B}[119;1:3u")   // w released
        #expect(try capture.waitFor(.neutral))
        child.send("\u{1B}[1;1:2C\u{1B}[1;1:2C\u{1B}[1;1:3C")   // two repeats and a release of →
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(2), buttons: [])))
        child.send("\u{1B}[97u")   // a pressed...
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(2), buttons: .a)))
        child.send("\u{1B}[O")   // ...then focus lost: its release would go to another window
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(2), buttons: [])), "focus loss releases")

        child.send("\u{1B}[99;5u")   // Ctrl-C in the kitty encoding
        #expect(child.wait()?.status == 0)
        try expectNeutralLast(capture)
        expectRestored(child)
    }

    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func signalsRestoreTheTerminal(signal: Int32) throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        child.send("\u{1B}[C")   // a tilt does not lapse, unlike a hold key
        #expect(try capture.waitFor(tilted))
        child.signal(signal)
        #expect(child.wait()?.status == 0)
        try expectNeutralLast(capture, after: tilted)
        expectRestored(child)
    }

    /// A crash restores the terminal and still sends neutral, then dies of the same signal.
    @Test(arguments: [SIGSEGV, SIGABRT, SIGBUS])
    func fatalSignalsRestoreTheTerminalAndSendNeutral(signal: Int32) throws {
        let capture = try PacketCapture()
        // The runtime's backtracer would otherwise take over after our handler (and may wait for
        // a person on a terminal).
        let child = try start(capture, environment: ["SWIFT_BACKTRACE": "enable=no"])
        child.send("\u{1B}[C")
        #expect(try capture.waitFor(tilted))
        child.signal(signal)
        let end = child.wait()
        #expect(end?.reason == .uncaughtSignal && end?.status == signal)
        try expectNeutralLast(capture, after: tilted)
        expectRestored(child)
    }

    @Test func aHungUpTerminalIsALostDevice() throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        child.send("w")
        #expect(try capture.waitFor(forwardState))
        child.send("\u{1B}[C")
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(1), buttons: .forward)))
        child.hangUp()
        let end = child.wait()
        #expect(end?.reason == .exit && end?.status == 3)
        try expectNeutralLast(capture)
    }

    @Test func keyboardWithoutATerminalIsRefused() throws {
        let child = try ChildProcess(analogRemote: ["control", "--peer", "127.0.0.1:9", "--input", "keyboard"])
        #expect(child.wait() == 3)
        #expect(eventually { child.stderr.hasPrefix("analog-remote: keyboard: stdin is not a terminal") })
    }
}
