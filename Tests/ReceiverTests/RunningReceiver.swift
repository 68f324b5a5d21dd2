import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// Where an end-to-end test reads the board's memory map from.
///
/// Both sources print the same line after each change, `map <72 hex digits>` (36 bytes), so a
/// test does not care which one it watches.
/// - ``inMemory``: `--board sim --trace-board`: the in-process simulated board, and on the
///   receiver's stdout the map the receiver asked for after every change.
/// - ``boardSim``: a separate `analog-remote board-sim --trace` on a pseudo-terminal, driven
///   over `--board serial:PATH` — the real text protocol, byte for byte; the lines are what the
///   simulated firmware actually holds, and its `cmd` lines are the exact commands received.
enum BoardUnderTest: Sendable, CaseIterable {
    case inMemory
    case boardSim
}

/// A built `analog-remote receive` under test, with the board it drives.
final class RunningReceiver {
    let process: ChildProcess
    let port: UInt16
    let board: BoardUnderTest
    /// The board-sim process for ``BoardUnderTest/boardSim``.
    let boardSim: ChildProcess?

    static let mapSize = 36

    /// Starts the receiver and waits for `receiving on udp port N` (the first stdout line).
    init(_ arguments: [String], board: BoardUnderTest = .inMemory, environment: [String: String] = [:]) throws {
        self.board = board
        var args = ["receive", "--quiet", "--no-advertise"] + (arguments.contains("--port") ? [] : ["--port", "0"]) + arguments
        switch board {
        case .inMemory:
            args += (arguments.contains("--board") ? [] : ["--board", "sim"]) + ["--trace-board"]
            boardSim = nil
        case .boardSim:
            let sim = try ChildProcess(analogRemote: ["board-sim", "--trace", "--quiet", "--firmware", "motors"])
            guard sim.waitForOutput(timeout: .seconds(20), { out, _ in out.contains("\n") }),
                  let path = sim.stdout.split(separator: "\n").first, path.hasPrefix("/") else {
                throw ReceiverTestError("board-sim did not start: \(sim.stdout.debugDescription) \(sim.stderr.debugDescription)")
            }
            args += ["--board", "serial:\(path)"]
            boardSim = sim
        }
        process = try ChildProcess(analogRemote: args, environment: environment)
        let started = process.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") }
        let first = process.stdout.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        guard started, first.hasPrefix("receiving on udp port "), let port = UInt16(first.dropFirst("receiving on udp port ".count)) else {
            throw ReceiverTestError("receiver did not start: stdout \(process.stdout.debugDescription) stderr \(process.stderr.debugDescription)")
        }
        self.port = port
    }

    /// Text the board's trace lines come in.
    var boardTrace: String {
        switch board {
        case .inMemory: process.stdout
        case .boardSim: boardSim?.stdout ?? ""
        }
    }

    /// The commands board-sim received (`cmd …` lines), for ``BoardUnderTest/boardSim``.
    var boardCommands: [String] {
        boardTrace.split(separator: "\n").filter { $0.hasPrefix("cmd ") }.map { String($0.dropFirst(4)) }
    }

    /// Every memory map the board reported, oldest first.
    var maps: [[UInt8]] { Self.maps(in: boardTrace) }

    /// The addresses the receiver controls with the kit mapping: buzzer, LEDs, motors. Maps are
    /// compared on these only — the simulated firmware also holds its product id, version and
    /// program counter, which the receiver never writes.
    static let controlled: [Int] = [0x09, 0x0A, 0x0F, 0x10, 0x22, 0x23]

    static func maps(in text: String) -> [[UInt8]] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("map "), let bytes = Hex.bytes(line.dropFirst(4)), bytes.count == mapSize else { return nil }
            var projected = [UInt8](repeating: 0, count: mapSize)
            for a in controlled { projected[a] = bytes[a] }
            return projected
        }
    }

    /// Waits until the latest map satisfies `predicate` (or `timeout` passes). With a separate
    /// board-sim it waits on that process's output: the receiver may be gone (a crash test) while
    /// the board still prints what it was last sent.
    @discardableResult
    func waitForMap(timeout: Duration = .seconds(5), _ predicate: ([UInt8]) -> Bool) -> Bool {
        (boardSim ?? process).waitForOutput(timeout: timeout) { _, _ in
            Self.maps(in: boardTrace).last.map(predicate) ?? false
        }
    }

    /// The parsed `summary …` line, once the receiver has exited.
    var summary: [String: Int]? {
        guard let line = process.stdout.split(separator: "\n").last(where: { $0.hasPrefix("summary ") }) else { return nil }
        var out: [String: Int] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let kv = field.split(separator: "=")
            if kv.count == 2, let v = Int(kv[1]) { out[String(kv[0])] = v }
        }
        return out
    }

    /// Datagrams queued on the receiver's socket and dropped by the kernel (``UDPQueue``).
    func socketStats() -> (queued: Int, drops: Int)? { UDPQueue.stats(port: port) }

    /// Waits until the receiver has read everything queued on its socket.
    @discardableResult
    func waitUntilDrained(timeout: Duration = .seconds(10)) -> Bool { UDPQueue.waitUntilDrained(port: port, timeout: timeout) }

    /// A 36-byte map with the kit's drive and LED addresses set, everything else 0.
    static func kitMap(left: UInt8 = 0, right: UInt8 = 0, led1: UInt8 = 0, led2: UInt8 = 0) -> [UInt8] {
        var map = [UInt8](repeating: 0, count: mapSize)
        map[0x22] = left
        map[0x23] = right
        map[0x0F] = led1
        map[0x10] = led2
        return map
    }

    static func motorsStopped(_ map: [UInt8]) -> Bool { map[0x22] == 0 && map[0x23] == 0 }
}

/// A controller for tests: one UDP socket (so one source port) sending to the receiver.
final class TestController {
    let socket: UDPSocket
    let target: SocketAddress

    init(port: UInt16, host: String = "127.0.0.1") throws {
        target = try SocketAddress.resolve(host: host, port: port)[0]
        socket = try UDPSocket.sender(for: target)
    }

    func send(_ state: ControllerState) throws { try send(raw: StatePacket.encode(state)) }

    /// Sends, waiting while the socket buffer is full (a loopback sender rarely is).
    func send(raw bytes: [UInt8]) throws {
        while try !socket.send(bytes, to: target) {
            _ = try Poller.wait(for: socket.descriptor.rawValue, events: .writable, timeout: .milliseconds(100))
        }
    }
}

struct ReceiverTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

