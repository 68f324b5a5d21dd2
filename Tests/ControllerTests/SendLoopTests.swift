@testable import Controller
import Console
import Foundation
import RemoteWire
import Synchronization
import SystemIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The send loop in this process, fed through a pipe, with its destination swapped while it runs
/// (what discovery will do when the session's receiver moves).
@Suite struct SendLoopTests {
    final class Outcome: Sendable {
        let reason = Mutex<Result<EndReason, any Error>?>(nil)
    }

    /// Runs a loop reading `ANGLE BUTTONS` lines from a pipe on its own thread; returns the
    /// pipe's write end and where the result lands.
    func startLoop(destination: Destination, rate: Double) throws -> (write: Int32, outcome: Outcome) {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let outcome = Outcome()
        // No signals watched: the test runner's own SIGINT/SIGTERM handling stays as it is.
        let signals = try SignalWatcher(signals: [])
        Thread {
            let loop = SendLoop(source: StdinSource(fd: readEnd, name: "pipe"), destination: destination,
                                schedule: .init(rate: rate), signals: signals, status: StatusLine(quiet: true))
            let result = Result { try loop.run() }
            close(readEnd)
            outcome.reason.withLock { $0 = result }
        }.start()
        return (writeEnd, outcome)
    }

    func write(_ fd: Int32, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    func waitForEnd(_ outcome: Outcome) -> EndReason? {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if let r = outcome.reason.withLock({ $0 }) { return try? r.get() }
            usleep(2_000)
        }
        return nil
    }

    @Test func aNewPeerGetsTheCurrentStateAtOnceAndTheWayOut() throws {
        let first = try PacketCapture(), second = try PacketCapture()
        let a = try SocketAddress.resolve(first.peer), b = try SocketAddress.resolve(second.peer)
        let destination = try Destination(.init(address: a, label: "first"))
        let (input, outcome) = try startLoop(destination: destination, rate: 1)
        let state = ControllerState(angle: 0.3, buttons: .forward)
        write(input, "0.3 forward\n")
        #expect(try first.waitFor(state))

        let switched = ContinuousClock.now
        destination.set(.init(address: b, label: "second"))
        #expect(try second.waitFor(state, timeout: .seconds(3)))
        // At 1 Hz the next resend is up to a second away: the new peer was served at once.
        #expect(ContinuousClock.now - switched < .milliseconds(500))

        close(input)
        #expect(waitForEnd(outcome) == .endOfInput)
        try second.drain()
        #expect(second.states.suffix(3) == [.neutral, .neutral, .neutral])
        try first.drain()
        #expect(first.states.last == state, "the old peer gets nothing after the switch, not even the way out")
    }

    @Test func withoutAPeerNothingIsSentUntilOneIsSet() throws {
        let capture = try PacketCapture()
        let destination = try Destination(nil)
        let (input, outcome) = try startLoop(destination: destination, rate: 50)
        write(input, "-0.1 b\n")
        #expect(try capture.next(timeout: .milliseconds(100)) == nil)
        destination.set(.init(address: try SocketAddress.resolve(capture.peer), label: "found"))
        #expect(try capture.waitFor(ControllerState(angle: -0.1, buttons: .b)))
        close(input)
        #expect(waitForEnd(outcome) == .endOfInput)
    }
}

@Suite struct StatusReportTests {
    @Test func showsTargetBarAngleButtonsRateAndInput() throws {
        let address = try SocketAddress.resolve("127.0.0.1:5000")
        let line = StatusReport.line(peer: .init(address: address, label: "127.0.0.1:5000"),
                                     state: ControllerState(angle: -0.2, buttons: [.forward, .a]),
                                     rate: 50, input: "keyboard", stopping: false, sendError: nil)
        #expect(line == "→ 127.0.0.1:5000  [         #|          ] -0.20 rad  forward+a  50 pkt/s  keyboard")
    }

    @Test func namesTheAddressWhenTheLabelDiffersAndShowsTroubles() throws {
        let address = try SocketAddress.resolve("127.0.0.1:5000")
        let line = StatusReport.line(peer: .init(address: address, label: "localhost:5000"),
                                     state: ControllerState(angle: ControllerState.maxAngle, buttons: []),
                                     rate: 3, input: "stdin", stopping: true, sendError: "network is unreachable")
        #expect(line == "→ localhost:5000 (127.0.0.1:5000)  [          |##########] +1.57 rad  none  3 pkt/s  stdin  stopping  send failed: network is unreachable")
        #expect(StatusReport.line(peer: nil, state: .neutral, rate: 0, input: "stdin", stopping: false, sendError: nil)
            .hasPrefix("→ (no receiver yet: nothing sent)"))
    }

    @Test func rateMeterCountsTheLastSecond() {
        var meter = RateMeter()
        let t0 = ContinuousClock.now
        for i in 0..<300 { meter.record(t0 + .milliseconds(i * 10)) }
        #expect(meter.rate(now: t0 + .milliseconds(2990)) == 100)
        #expect(meter.rate(now: t0 + .milliseconds(5000)) == 0)
    }

    @Test func rateMeterNeverReadKeepsAboutASecond() {
        // A quiet controller records every send and never asks for the rate.
        var meter = RateMeter()
        let t0 = ContinuousClock.now
        for i in 0..<100_000 { meter.record(t0 + .milliseconds(i * 2)) }   // 200 s at 500 Hz
        #expect(meter.kept <= 2 * 501 + 256)
        #expect(meter.rate(now: t0 + .milliseconds(199_998)) == 500)
    }
}
