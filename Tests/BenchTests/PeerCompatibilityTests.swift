#if canImport(Glibc)
import Glibc
#endif
@testable import Bench
import BoardProtocol
import Controller
import Foundation
import Receiver
import RemoteWire
import Testing
import TestSupport

/// The bench compares ours with the peers of benchmarks/peers/ only if they do the same job: for
/// the same input lines, the same datagrams on the wire (`control` and the C controller, caught
/// by a UDP socket on loopback) and the same `W` lines on the board pty (`receive`, the C
/// receiver and the Python bridge, fed the datagrams of those lines). What is expected comes
/// from our codec and mapping: a peer whose packet or mapping differs fails here, naming the line.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PeerCompatibilityTests {
    /// Every line changes the state (a datagram to wait for). Resting first (our receiver starts
    /// waiting for rest), then turns, both throttles, A and B (LED runs beside the motors'), full
    /// lock, a clamped wheel, a number and hex for the buttons, a tilt inside the deadzone after
    /// rounding (no `W`), and back to rest.
    static let lines = ["0 none", "0.3 forward", "-0.3 forward", "0.5 forward+a", "-0.25 backward+A", "0.7853982 forward",
                        "0 b", "0.06 3", "-1.5707964 backward", "0.1 0x9", "-0.0555 none", "0 none"]

    static var states: [ControllerState] { lines.map { try! StateLine.parse(Substring($0))! } }

    /// The checkout's peers, the C pair compiled into a temporary directory (the caller removes it).
    static func programs(compile: Bool = true) -> PeerPrograms {
        PeerPrograms.prepare(directory: Paths.repositoryFile("benchmarks/peers").path, compileC: compile)
    }

    static var settings: LatencySettings {
        LatencySettings(samples: 0, warmUp: 0, pacer: Pacer(), interruption: Interruption(), executable: Paths.analogRemote.path)
    }

    // MARK: the wire

    @Test("our control and the C controller send the same 8 bytes for every line")
    func datagrams() throws {
        let programs = Self.programs()
        defer { programs.remove() }
        let c = try #require(programs.cController, "\(programs.cSkipped ?? "")")
        let ours = try sent { port in try RunningController(.child, port: port, settings: Self.settings) }
        let theirs = try sent { port in try RunningController(peer: c, arguments: ["127.0.0.1:\(port)"], label: "peer-controller") }
        #expect(theirs == ours)
        #expect(ours == Self.states.map { hex(StatePacket.encode($0)) }, "our control against our own encoder")
    }

    /// The distinct state packets (8 bytes) a controller sent for ``lines``, in order, as hex;
    /// each line's packet is waited for before the next line is written. A repeat is allowed
    /// (the 20 ms resend), any other 8 bytes fail the test.
    func sent(_ start: (UInt16) throws -> RunningController) throws -> [String] {
        let capture = try Capture()
        let controller = try start(capture.port)
        defer { try? controller.stop() }
        var distinct: [String] = []
        var previous = hex(StatePacket.encode(ControllerState(angle: 0)))
        for (line, state) in zip(Self.lines, Self.states) {
            let expected = hex(StatePacket.encode(state))
            try controller.write(line + "\n")
            var got: String?
            while got != expected {
                guard let datagram = capture.next(timeout: 3000) else {
                    Issue.record("`\(line)`: no datagram \(expected) within 3 s")
                    return distinct
                }
                // Other lengths are control messages (Protocol.md §2.3, §7; our control says who
                // it is), not states: the C controller has none.
                guard datagram.count == StatePacket.size else { continue }
                got = hex(datagram)
                #expect(got == expected || got == previous, "`\(line)`: sent \(got!), expected \(expected)")
            }
            distinct.append(expected)
            previous = expected
        }
        return distinct
    }

    // MARK: the board

    @Test("receive, the C receiver and the Python bridge write the same W lines for the same datagrams",
          arguments: ["ours", "c", "python"])
    func writes(_ which: String) throws {
        let programs = Self.programs(compile: which == "c")
        defer { programs.remove() }
        var board = try BoardSide()
        let receiver: RunningReceiver
        switch which {
        case "ours":
            // No sensor reads: the peers do not read, and the end waits for a quiet link.
            receiver = try RunningReceiver(.child, board: &board, settings: Self.settings,
                                           extraArguments: ["--failsafe-ms", "5000", "--sensor-rate", "0"])
        case "c":
            let c = try #require(programs.cReceiver, "\(programs.cSkipped ?? "")")
            receiver = try RunningReceiver(peer: c, arguments: [board.path, "0"], label: "peer-receiver", board: &board, settings: Self.settings)
        default:
            let python = try #require(programs.python, "\(programs.pythonSkipped ?? "")")
            receiver = try RunningReceiver(peer: python, arguments: [programs.bridge!, board.path, "0"], label: "bridge.py",
                                           board: &board, settings: Self.settings)
        }
        defer { _ = try? receiver.stop(board: &board) }
        let sender = try DatagramSender(port: receiver.port)
        defer { sender.close() }
        var values = Mapping.motors.values(for: ControllerState(angle: 0))
        for (line, state) in zip(Self.lines, Self.states) {
            let next = Mapping.motors.values(for: state)
            let expected = Set(Self.runs(from: values, to: next))
            values = next
            try sender.send(state)
            var got: [String] = []
            let deadline = Monotonic.now() + 3_000_000_000
            while got.count < expected.count, board.waitReadable(until: deadline) {
                got += try board.service().map { String(decoding: $0.bytes, as: UTF8.self) }.filter { $0.hasPrefix("W") }
            }
            #expect(Set(got) == expected && got.count == expected.count, "\(which), `\(line)`: wrote \(got), expected \(expected.sorted())")
        }
        // Nothing more after the last line (a quiet link for 200 ms).
        var extra: [String] = []
        while board.waitReadable(until: Monotonic.now() + 200_000_000) {
            extra += try board.service().map { String(decoding: $0.bytes, as: UTF8.self) }.filter { $0.hasPrefix("W") }
        }
        #expect(extra.isEmpty, "\(which): wrote \(extra) after the last line")
    }

    /// The `W` lines (LF-terminated) that take the board from `old` to `new`: changed addresses,
    /// one line per run of neighbours (Protocol.md §3.4, the board link's rule).
    static func runs(from old: [UInt8: UInt8], to new: [UInt8: UInt8]) -> [String] {
        var lines: [String] = []
        var run: [UInt8] = []
        func flush() {
            guard let first = run.first else { return }
            let bytes = run.map { new[$0]! }
            lines.append(String(decoding: BoardCommand.write(address: first, bytes: bytes).line, as: UTF8.self))
            run = []
        }
        for address in new.keys.sorted() where new[address] != old[address] {
            if let last = run.last, address != last &+ 1 { flush() }
            run.append(address)
        }
        flush()
        return lines
    }
}

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// A UDP socket on 127.0.0.1 that catches what a controller sends.
private final class Capture {
    let fd: Int32
    let port: UInt16

    init() throws {
        let sock = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(sock, sa, length) == 0 && getsockname(sock, sa, &length) == 0
            }
        }
        guard sock >= 0, ok else { throw SystemErrorText("capture socket: errno \(errno)") }
        fd = sock
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }

    /// The next datagram, or nil after `timeout` ms.
    func next(timeout: Int32) -> [UInt8]? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, timeout) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n < 0 ? nil : Array(buffer[..<n])
    }
}

private struct SystemErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ text: String) { description = text }
}
