import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The keyboard UI on a pseudo-terminal, for what a driver feels: steering that springs back to
/// centre on release (the default), full lock in four presses, and Ctrl-Z / `fg`.
@Suite(.serialized) struct KeyboardSteeringTerminalTests {
    static func tilt(_ n: Int) -> Float { Float(Double(n) * 0.7853982 / 4) }

    func start(_ capture: PacketCapture, _ extra: [String] = []) throws -> PtyChild {
        let child = try PtyChild(["control", "--plain", "--peer", capture.peer] + extra)
        #expect(child.waitUntil { child.inRawMode }, "raw mode; output: \(child.output)")
        #expect(try capture.waitFor(.neutral))
        return child
    }

    /// The process's state letter from /proc (T = stopped).
    static func processState(_ pid: Int32) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(close, offsetBy: 2)...].first
    }

    /// Distinct states in arrival order.
    static func distinct(_ states: [ControllerState]) -> [ControllerState] {
        var out: [ControllerState] = []
        for s in states where out.last != s { out.append(s) }
        return out
    }

    /// Without release events a tap of → steers for the first-hold time, then the tilt returns
    /// to centre by itself: the robot does not keep spinning.
    @Test func aTapSteersThenTheTiltReturnsToCentre() throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        #expect(child.waitUntil { child.output.contains("←/→ steer (back to centre on release), 4 presses to full lock") })
        child.send("\u{1B}[C")
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(1), buttons: [])))
        #expect(try capture.waitFor(.neutral), "back to centre once the key lapses")
        child.send("q")
        #expect(child.wait()?.status == 0)
        try capture.drain()
        #expect(Self.distinct(capture.states) == [.neutral, ControllerState(angle: Self.tilt(1), buttons: []), .neutral])
    }

    /// With release events: four presses (a press and three repeats) reach full lock, a fifth
    /// changes nothing (full lock is where steering saturates), the release centres at once.
    @Test func fourStepsReachFullLockAndTheReleaseCentres() throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        child.send("\u{1B}[?11u")   // the terminal answers: event types on
        #expect(child.waitUntil { child.output.contains("reports key releases") })
        child.send("\u{1B}[C\u{1B}[1;1:2C\u{1B}[1;1:2C\u{1B}[1;1:2C")
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(4), buttons: [])))
        #expect(Self.tilt(4) == 0.7853982, "full lock is the kit mapping's π/4")
        child.send("\u{1B}[1;1:2C")   // one more repeat: still full lock
        child.send("\u{1B}[119u")     // w pressed: proves the repeat was taken before it
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(4), buttons: .forward)))
        child.send("\u{1B}[1;1:3C")   // → released
        #expect(try capture.waitFor(ControllerState(angle: 0, buttons: .forward)))
        child.send("\u{1B}[D")   // ← pressed: starts from centre, not from full lock right
        #expect(try capture.waitFor(ControllerState(angle: -Self.tilt(1), buttons: .forward)))
        child.send("\u{1B}[1;1:3D")   // ← released
        #expect(try capture.waitFor(ControllerState(angle: 0, buttons: .forward)))
        child.send(" ")                       // space: stop
        #expect(try capture.waitFor(.neutral))
        child.send("q")
        #expect(child.wait()?.status == 0)
        try capture.drain()
        let seen = Self.distinct(capture.states)
        #expect(!seen.contains { $0.angle > Self.tilt(4) }, "never beyond full lock: \(seen)")
    }

    @Test func latchModeKeepsTheTilt() throws {
        let capture = try PacketCapture()
        let child = try start(capture, ["--steer", "latch"])
        child.send("\u{1B}[C\u{1B}[C")
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(2), buttons: [])))
        child.send("-")   // tilt scale 75 %
        #expect(try capture.waitFor(ControllerState(angle: Float(2 * 0.7853982 * 3 / 4 / 4), buttons: [])))
        #expect(child.waitUntil { child.output.contains("keyboard (tilt 75%)") }, "the status line shows the scale")
        child.send("0")
        #expect(try capture.waitFor(.neutral))
        child.send("q")
        #expect(child.wait()?.status == 0)
    }

    /// Ctrl-Z: neutral goes out, the terminal is given back and the process stops; `fg`
    /// (SIGCONT) puts the terminal back in raw mode and the controller sends again, from neutral.
    @Test(arguments: ["ctrl-z", "SIGTSTP"])
    func suspendAndResume(how: String) throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        child.send("w\u{1B}[C")
        #expect(try capture.waitFor(ControllerState(angle: Self.tilt(1), buttons: .forward)))
        if how == "ctrl-z" { child.send("\u{1A}") } else { child.signal(SIGTSTP) }
        #expect(try capture.waitFor(.neutral), "neutral before stopping")
        let pid = child.process.processIdentifier
        #expect(child.waitUntil { Self.processState(pid) == "T" }, "stopped: \(String(describing: Self.processState(pid)))")
        #expect(PtyChild.same(child.before, child.current), "the terminal is given back while stopped")
        try capture.drain()   // stopped: nothing more comes
        kill(pid, SIGCONT)
        #expect(child.waitUntil { child.inRawMode }, "raw mode again after fg")
        let first = try #require(try capture.next(), "sending again")
        #expect(first == StatePacket.encode(.neutral), "resumes from neutral, not from the keys held before: \(Hex.string(first))")
        child.send("a")
        #expect(try capture.waitFor(ControllerState(angle: 0, buttons: .a)), "keys work again")
        child.send("q")
        #expect(child.wait()?.status == 0)
        #expect(PtyChild.same(child.before, child.current))
    }

    /// `q` quits in gamepad mode too when stdin is a terminal (no pad needed: it waits for one,
    /// sending neutral), and the terminal is put back.
    @Test func gamepadModeQuitsOnQ() throws {
        let capture = try PacketCapture()
        let child = try PtyChild(["control", "--plain", "--peer", capture.peer, "--input", "gamepad"])
        #expect(child.waitUntil { child.inRawMode }, "raw mode for the terminal's keys: \(child.output)")
        #expect(try capture.waitFor(.neutral))
        child.send("q")
        let end = child.wait()
        #expect(end?.reason == .exit && end?.status == 0, "\(child.output.suffix(300))")
        #expect(PtyChild.same(child.before, child.current), "terminal restored")
        try capture.drain()
        #expect(capture.states.suffix(3).allSatisfy { $0 == .neutral })
    }

    /// A SIGSTOP from outside cannot be caught; SIGCONT still brings raw mode and sending back.
    @Test func anOutsideStopAndContinue() throws {
        let capture = try PacketCapture()
        let child = try start(capture)
        let pid = child.process.processIdentifier
        kill(pid, SIGSTOP)
        #expect(child.waitUntil { Self.processState(pid) == "T" })
        var cooked = child.current
        cooked.c_lflag |= tcflag_t(ECHO | ICANON)   // as a shell would leave it
        tcsetattr(child.slave, TCSANOW, &cooked)
        try capture.drain()   // stopped: nothing more comes
        kill(pid, SIGCONT)
        #expect(child.waitUntil { child.inRawMode }, "raw mode again")
        #expect(try capture.next() != nil, "sending again")
        child.send("a")
        #expect(try capture.waitFor(ControllerState(angle: 0, buttons: .a)), "keys arrive as keys again")
        child.send("q")
        #expect(child.wait()?.status == 0)
    }
}
