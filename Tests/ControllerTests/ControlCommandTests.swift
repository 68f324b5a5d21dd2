import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `analog-remote control` as a person runs it: the built binary, stdin or a script in, packets
/// caught by a UDP socket on loopback.
@Suite(.serialized) struct ControlCommandTests {
    func control(_ capture: PacketCapture, _ extra: [String] = []) throws -> ChildProcess {
        try ChildProcess(analogRemote: ["control", "--plain", "--peer", capture.peer, "--quiet"] + extra, stdin: true)
    }

    /// The last three packets are neutral and the one before is not (so the neutral ones are the
    /// way out, not leftovers).
    func expectNeutralExit(_ capture: PacketCapture, after state: ControllerState) throws {
        try capture.drain()
        let states = capture.states
        try #require(states.count >= 4, "packets: \(states)")
        #expect(states.suffix(3).allSatisfy { $0 == .neutral && $0.angle.sign == .plus }, "\(states.suffix(4))")
        #expect(states[states.count - 4] == state)
    }

    @Test func everyGoldenVectorGoesOnTheWireExactly() throws {
        let capture = try PacketCapture()
        let child = try control(capture)
        var previous = StatePacket.encode(.neutral)
        for v in try ValidVectors.load() {
            let want = try #require(Hex.bytes(v.hex))
            child.write("\(v.angle) \(v.buttons)\n")
            var stale: [[UInt8]] = []
            let arrived = try capture.waitFor { p in
                if p != want { stale.append(p) }
                return p == want
            }
            #expect(arrived, "\(v.name): no packet \(v.hex); stderr: \(child.stderr)")
            #expect(stale.allSatisfy { $0 == previous }, "\(v.name): unexpected packets before it: \(stale.map(Hex.string))")
            previous = want
        }
        child.closeStdin()
        #expect(child.wait() == 0)
    }

    @Test func aChangeIsOnTheWireWithoutWaitingForThePeriod() throws {
        let capture = try PacketCapture()
        let child = try control(capture, ["--rate", "1"])
        #expect(try capture.waitFor(.neutral))
        let start = ContinuousClock.now
        let changes = (1...10).map { ControllerState(angle: Float($0) / 100, buttons: $0 % 2 == 0 ? .forward : .a) }
        for state in changes {
            child.write("\(state.angle) \(state.buttons.rawValue)\n")
            #expect(try capture.waitFor(state, timeout: .seconds(3)), "\(state)")
        }
        let elapsed = ContinuousClock.now - start
        // At 1 Hz, changes that waited for the period would take at least 9 s.
        #expect(elapsed < .seconds(5), "10 changes took \(elapsed)")
        child.closeStdin()
        #expect(child.wait() == 0)
    }

    @Test func anUnchangedStateIsResentAtTheRate() throws {
        let capture = try PacketCapture()
        let child = try control(capture, ["--rate", "50"])
        let state = ControllerState(angle: 0.25, buttons: .forward)
        child.write("0.25 forward\n")
        #expect(try capture.waitFor(state))
        let first = ContinuousClock.now
        for _ in 0..<50 { try #require(try capture.next(timeout: .seconds(2)) == StatePacket.encode(state)) }
        let elapsed = ContinuousClock.now - first
        // 50 resends at 50 Hz: 1 s. Loose bounds; the benchmark measures it exactly.
        #expect(elapsed > .milliseconds(600) && elapsed < .milliseconds(1600), "50 resends took \(elapsed)")
        child.closeStdin()
        #expect(child.wait() == 0)
    }

    @Test func endOfInputSendsNeutralThreeTimesAndExitsZero() throws {
        let capture = try PacketCapture()
        let child = try control(capture)
        let state = ControllerState(angle: -0.5, buttons: [.backward, .b])
        child.write("-0.5 backward+b\n")
        #expect(try capture.waitFor(state))
        child.closeStdin()
        #expect(child.wait() == 0)
        try expectNeutralExit(capture, after: state)
    }

    @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
    func aSignalSendsNeutralThreeTimesAndExitsZero(signal: Int32) throws {
        let capture = try PacketCapture()
        let child = try control(capture)
        let state = ControllerState(angle: 0.4, buttons: .forward)
        child.write("0.4 forward\n")
        #expect(try capture.waitFor(state))
        child.signal(signal)
        #expect(child.wait() == 0)
        try expectNeutralExit(capture, after: state)
    }

    @Test func badLinesAreReportedWithTheirNumberAndSkipped() throws {
        let capture = try PacketCapture()
        let child = try control(capture)
        child.write("0.1 forward\nnot-a-number a\n\n# comment\n0 jump\n2.5 none\n0.1 forward a\n")
        child.write("-0.2 a+b\n")
        #expect(try capture.waitFor(ControllerState(angle: -0.2, buttons: [.a, .b])), "the stream goes on after bad lines")
        #expect(child.waitForOutput { _, err in err.contains("stdin:6:") && err.contains("stdin:7:") })
        let lines = child.stderr.split(separator: "\n")
        #expect(lines.count == 4, "one line per bad line: \(lines)")
        #expect(lines.contains { $0.hasPrefix("stdin:2: bad angle `not-a-number`") })
        #expect(lines.contains { $0.hasPrefix("stdin:5: bad buttons `jump`") })
        #expect(lines.contains { $0.hasPrefix("stdin:6: angle 2.5 is beyond") })
        #expect(lines.contains { $0.hasPrefix("stdin:7: expected ANGLE BUTTONS") })
        #expect(child.isRunning)
        child.closeStdin()
        #expect(child.wait() == 0)
    }

    @Test func aScriptPlaysInOrderThenSendsNeutral() throws {
        let capture = try PacketCapture()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ctl-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).script")
        try "# test\n0 0.1 forward\n150 0.2 forward+a\n300 -0.3 backward\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try ChildProcess(analogRemote: ["control", "--plain", "--peer", capture.peer, "--quiet", "--input", "script:\(file.path)"])
        #expect(child.wait() == 0, "stderr: \(child.stderr)")
        try capture.drain()
        var distinct: [ControllerState] = []
        for s in capture.states where distinct.last != s { distinct.append(s) }
        #expect(distinct == [
            ControllerState(angle: 0.1, buttons: .forward), ControllerState(angle: 0.2, buttons: [.forward, .a]),
            ControllerState(angle: -0.3, buttons: .backward), .neutral,
        ])
        #expect(capture.states.suffix(3).allSatisfy { $0 == .neutral })
        // 150 ms at 50 Hz: the first state is resent several times before the second.
        #expect(capture.states.prefix { $0.angle == 0.1 }.count >= 4)
    }

    @Test func aBadScriptIsRefusedBeforeAnythingIsSent() throws {
        let capture = try PacketCapture()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ctl-bad-\(getpid()).script")
        try "0 0 none\n100 0.1 fast\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try ChildProcess(analogRemote: ["control", "--plain", "--peer", capture.peer, "--input", "script:\(file.path)"])
        #expect(child.wait() == 2)
        #expect(eventually { child.stderr.hasSuffix("\n") })
        #expect(child.stderr == "analog-remote: script \(file.path):2: bad buttons `fast` (use a number, 0x hex, none, or names joined by + such as forward+a; names: forward backward a b x y l r start select home l3 r3 left right)\n")
        #expect(try capture.next(timeout: .milliseconds(100)) == nil, "nothing may be sent")
    }

    @Test func theShippedDemoScriptRuns() throws {
        let script = Paths.repositoryFile("config-examples/drive-square.script").path
        let capture = try PacketCapture()
        let child = try ChildProcess(analogRemote: ["control", "--plain", "--peer", capture.peer, "--quiet", "--rate", "10", "--input", "script:\(script)"])
        // Seen turning while driving forward, then stopped for good.
        #expect(try capture.waitFor(timeout: .seconds(8)) { (try? StatePacket.decode($0)) == ControllerState(angle: 0.7854, buttons: [.forward, .a]) })
        child.signal(SIGINT)
        #expect(child.wait() == 0)
    }

    @Test func anIPv6PeerLiteralWorks() throws {
        let server = try UDPSocket.bind(port: 0, host: "::1")
        let port = try server.localAddress().port
        let child = try ChildProcess(analogRemote: ["control", "--plain", "--peer", "[::1]:\(port)", "--quiet"], stdin: true)
        child.write("0.5 forward\n")
        var buffer = [UInt8](repeating: 0, count: 16)
        var got: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(5)
        while got != StatePacket.encode(ControllerState(angle: 0.5, buttons: .forward)), ContinuousClock.now < deadline {
            if let (n, _) = try server.receive(into: &buffer, timeout: .seconds(1)) { got = Array(buffer[..<n]) }
        }
        #expect(Hex.string(got) == "3f00000000000001")
        child.closeStdin()
        #expect(child.wait() == 0)
    }

    @Test(arguments: [
        (["control"], "say which receiver to drive: --peer HOST:PORT, or --session ID"),
        (["control", "--peer", "127.0.0.1:9", "--session", "s"], "--peer and --session exclude each other"),
        (["control", "--peer", "127.0.0.1:9", "--receiver", "robot"], "--receiver needs --session"),
        (["control", "--session", ""], "--session: the session ID is empty"),
        (["control", "--session", "s", "--rate", "0"], "between 1 and 1000"),
        (["control", "--peer", "localhost:http"], "expected HOST, IPv4 or [IPv6], optionally with :PORT"),
        (["control", "--peer", "127.0.0.1:0"], "optionally with :PORT (1…65535; default 27183)"),
        (["control", "--plain", "--name", "Ann", "--peer", "127.0.0.1:9"], "--plain sends only 8-byte states"),
        (["control", "--peer", "127.0.0.1:9", "--rate", "0"], "between 1 and 1000"),
        (["control", "--peer", "127.0.0.1:9", "--rate", "1001"], "between 1 and 1000"),
        (["control", "--peer", "127.0.0.1:9", "--input", "mouse"], "--input"),
    ])
    func badArgumentsAreUsageErrors(arguments: [String], message: String) throws {
        let child = try ChildProcess(analogRemote: arguments)
        #expect(child.wait() == 64)
        #expect(eventually { child.stderr.contains(message) }, "\(child.stderr)")
    }

    @Test func anUnresolvableNameIsANetworkError() throws {
        let child = try ChildProcess(analogRemote: ["control", "--peer", "no-such-host.invalid:5000"])
        #expect(child.wait() == 4)
        #expect(eventually { child.stderr.hasPrefix("analog-remote: --peer no-such-host.invalid:5000: cannot resolve") })
    }
}
