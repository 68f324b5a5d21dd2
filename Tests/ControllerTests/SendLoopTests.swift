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
    func startLoop(destination: Destination, rate: Double,
                   companion: (any SendLoopCompanion & Sendable)? = nil) throws -> (write: Int32, outcome: Outcome) {
        var fds: [Int32] = [-1, -1]
        try #require(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let outcome = Outcome()
        // No signals watched: the test runner's own SIGINT/SIGTERM handling stays as it is.
        let signals = try SignalWatcher(signals: [])
        Thread {
            var loop = SendLoop(source: StdinSource(fd: readEnd, name: "pipe"), destination: destination,
                                schedule: .init(rate: rate), signals: signals, status: StatusLine(quiet: true))
            loop.companion = companion
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

    /// A companion that records what each `service` call was told about its descriptor (a pipe).
    final class ProbeCompanion: SendLoopCompanion, @unchecked Sendable {
        let readEnd: Int32, writeEnd: Int32
        let told = Mutex<[Bool]>([])
        init() throws {
            var fds: [Int32] = [-1, -1]
            try #require(pipe(&fds) == 0)
            (readEnd, writeEnd) = (fds[0], fds[1])
            _ = fcntl(readEnd, F_SETFL, O_NONBLOCK)
        }
        deinit { close(readEnd); close(writeEnd) }
        var descriptor: Int32? { readEnd }
        var nextDeadline: ContinuousClock.Instant? { nil }
        var allowsStates: Bool { true }
        var statusParts: [String] { [] }
        func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
            service(socket: socket, peer: peer, now: now, readable: true)
        }
        func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant, readable: Bool) -> [CompanionAction] {
            var bytes = [UInt8](repeating: 0, count: 64)
            // Drained only when told readable: a wrong `false` leaves the pipe readable, and
            // every later wake-up would then be told `true`.
            if readable { _ = read(readEnd, &bytes, bytes.count) }
            told.withLock { $0.append(readable) }
            return []
        }
        func finish(socket: UDPSocket?, peer: SocketAddress?) {}
        func waitForCalls(_ count: Int) -> [Bool] {
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline, told.withLock({ $0.count }) < count { usleep(1_000) }
            return told.withLock { $0 }
        }
    }

    /// Wake-ups for the input tell the companion its descriptor was not readable (so the control
    /// session skips its `recvfrom`); a wake-up for the companion's own descriptor tells it so.
    @Test func aCompanionIsToldWhetherItsDescriptorWasReadable() throws {
        let capture = try PacketCapture()
        let destination = try Destination(.init(address: try SocketAddress.resolve(capture.peer), label: "capture"))
        let probe = try ProbeCompanion()
        let (input, outcome) = try startLoop(destination: destination, rate: 1, companion: probe)
        let before = probe.waitForCalls(1)
        #expect(before.first == true, "the call before the first state is not known idle")

        write(input, "0.2 forward\n")
        #expect(try capture.waitFor(ControllerState(angle: 0.2, buttons: .forward)))
        let afterLine = probe.waitForCalls(before.count + 1)
        #expect(afterLine.last == false, "\(afterLine)")

        write(probe.writeEnd, "x")
        let afterByte = probe.waitForCalls(afterLine.count + 1)
        #expect(afterByte.last == true, "\(afterByte)")

        write(input, "0.3 forward\n")
        #expect(try capture.waitFor(ControllerState(angle: 0.3, buttons: .forward)))
        let again = probe.waitForCalls(afterByte.count + 1)
        #expect(again.last == false, "the byte was read, so the pipe is idle again: \(again)")

        close(input)
        #expect(waitForEnd(outcome) == .endOfInput)
    }

    /// Like a paired control session whose hello to a new receiver is never answered: it holds
    /// states back from the moment it meets a peer other than its first.
    final class HoldingCompanion: SendLoopCompanion, @unchecked Sendable {
        private var first: SocketAddress?   // the loop's thread only
        private let allowed = Mutex(true)
        var descriptor: Int32? { nil }
        var nextDeadline: ContinuousClock.Instant? { nil }
        var allowsStates: Bool { allowed.withLock { $0 } }
        var statusParts: [String] { [] }
        func service(socket: UDPSocket?, peer: SocketAddress?, now: ContinuousClock.Instant) -> [CompanionAction] {
            if first == nil { first = peer } else if let peer, peer != first { allowed.withLock { $0 = false } }
            return []
        }
        func finish(socket: UDPSocket?, peer: SocketAddress?) {}
    }

    /// When the destination moves, the companions meet the new peer before any state goes to it,
    /// so one that holds states (pairing, `--secret`) holds the very first.
    @Test func aNewPeerMeetsTheCompanionsBeforeAnyState() throws {
        let first = try PacketCapture(), second = try PacketCapture()
        let destination = try Destination(.init(address: try SocketAddress.resolve(first.peer), label: "first"))
        let (input, outcome) = try startLoop(destination: destination, rate: 50, companion: HoldingCompanion())
        write(input, "0.3 forward\n")
        #expect(try first.waitFor(ControllerState(angle: 0.3, buttons: .forward)))

        destination.set(.init(address: try SocketAddress.resolve(second.peer), label: "second"))
        write(input, "0.4 forward\n")
        #expect(try second.next(timeout: .milliseconds(300)) == nil, "a state reached the new peer before its companions held it")
        close(input)
        #expect(waitForEnd(outcome) == .endOfInput)
        try second.drain()
        #expect(second.states.isEmpty, "\(second.states)")
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
