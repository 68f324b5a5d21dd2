import ControlPlane
import ControlWire
import Foundation
import Game
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// A built `analog-remote receive --board sim --trace-board` for the classroom tests: its port,
/// the memory maps it traced, its summary. (ReceiverTests has a richer one; the classroom tests
/// live here so the two do not collide.)
final class ClassroomReceiver {
    let process: ChildProcess
    let port: UInt16
    static let mapSize = 36
    /// The addresses the kit mapping controls: buzzer, LEDs, motors.
    static let controlled = [0x09, 0x0A, 0x0F, 0x10, 0x22, 0x23]

    /// Its own state directory (each robot its own robot id, as on real robots), unless the
    /// arguments give one; removed with it.
    let stateDir: String?

    init(_ arguments: [String]) throws {
        stateDir = arguments.contains("--state-dir") ? nil
            : FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-state-\(UUID().uuidString)").path
        process = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", "sim", "--trace-board"]
                                   + (stateDir.map { ["--state-dir", $0] } ?? []) + arguments)
        port = try Self.port(of: process, what: "receiver")
    }

    deinit {
        if let stateDir { try? FileManager.default.removeItem(atPath: stateDir) }
    }

    /// Waits for `receiving on udp port N` (the first stdout line) and returns N.
    static func port(of process: ChildProcess, what: String) throws -> UInt16 {
        let started = process.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") }
        let first = process.stdout.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        guard started, first.hasPrefix("receiving on udp port "), let port = UInt16(first.dropFirst("receiving on udp port ".count)) else {
            throw ClassroomTestError("\(what) did not start: stdout \(process.stdout.debugDescription) stderr \(process.stderr.debugDescription)")
        }
        return port
    }

    var maps: [[UInt8]] {
        process.stdout.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("map "), let bytes = Hex.bytes(line.dropFirst(4)), bytes.count == Self.mapSize else { return nil }
            var projected = [UInt8](repeating: 0, count: Self.mapSize)
            for a in Self.controlled { projected[a] = bytes[a] }
            return projected
        }
    }

    @discardableResult
    func waitForMap(timeout: Duration = .seconds(5), _ predicate: ([UInt8]) -> Bool) -> Bool {
        process.waitForOutput(timeout: timeout) { _, _ in maps.last.map(predicate) ?? false }
    }

    var summary: [String: Int]? {
        guard let line = process.stdout.split(separator: "\n").last(where: { $0.hasPrefix("summary ") }) else { return nil }
        var out: [String: Int] = [:]
        for field in line.split(separator: " ").dropFirst() {
            let kv = field.split(separator: "=")
            if kv.count == 2, let v = Int(kv[1]) { out[String(kv[0])] = v }
        }
        return out
    }

    /// Stops it with SIGTERM and returns its summary.
    func stop() throws -> [String: Int] {
        process.signal(SIGTERM)
        #expect(process.wait() == 0, "\(process.stderr.suffix(400))")
        return try #require(summary, "no summary: \(process.stdout.suffix(300))")
    }

    /// Datagrams queued on the receiver's socket and dropped by the kernel (dual-stack: udp6).
    func socketStats() -> (queued: Int, drops: Int)? { UDPQueue.stats(port: port) }

    @discardableResult
    func waitUntilDrained(timeout: Duration = .seconds(10)) -> Bool { UDPQueue.waitUntilDrained(port: port, timeout: timeout) }

    static func kitMap(left: UInt8 = 0, right: UInt8 = 0, led1: UInt8 = 0, led2: UInt8 = 0) -> [UInt8] {
        var map = [UInt8](repeating: 0, count: mapSize)
        map[0x22] = left
        map[0x23] = right
        map[0x0F] = led1
        map[0x10] = led2
        return map
    }

    static let forwardMap = kitMap(left: 0xC0, right: 0x40)
    static func motorsStopped(_ map: [UInt8]) -> Bool { map[0x22] == 0 && map[0x23] == 0 }
}

/// One UDP socket (one source port) talking to a receiver or the game: state packets, and
/// control messages through a ``ReliableChannel`` like a real controller's.
final class ClassroomPeer {
    let socket: UDPSocket
    let target: SocketAddress
    var channel: ReliableChannel
    /// Every control message delivered (reliable ones once, in order; unreliable as they came).
    private(set) var delivered: [ControlMessage] = []
    private var buffer = [UInt8](repeating: 0, count: 2048)
    /// The receiver-chosen connection id its accept carried (Protocol.md §7.2); a real
    /// controller sends it from then on (``adoptConnection()``).
    private(set) var acceptedConnectionID: UInt64?

    /// From now on, datagrams carry the id the receiver chose, as `control` does after its accept.
    func adoptConnection() {
        if let id = acceptedConnectionID { channel.connectionID = id }
    }

    init(port: UInt16, host: String = "127.0.0.1") throws {
        target = try SocketAddress.resolve(host: host, port: port)[0]
        socket = try UDPSocket.sender(for: target)
        channel = ReliableChannel(connection: .random(in: 1...UInt32.max))
    }

    deinit { socket.close() }

    func send(_ state: ControllerState) throws { try send(raw: StatePacket.encode(state)) }

    func send(raw bytes: [UInt8]) throws {
        while try !socket.send(bytes, to: target) {
            _ = try Poller.wait(for: socket.descriptor.rawValue, events: .writable, timeout: .milliseconds(100))
        }
    }

    /// Queues a reliable message and sends what the channel has ready.
    func say(_ message: ControlMessage) throws {
        try channel.send(message)
        try flush()
    }

    func flush() throws {
        for d in channel.poll(now: .now).datagrams { try send(raw: d) }
    }

    /// Reads what arrived (delivering it and sending acks and retransmissions) until `condition`
    /// holds or `timeout` passes.
    @discardableResult
    func pump(timeout: Duration = .seconds(5), until condition: ([ControlMessage]) -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            try readAvailable()
            try flush()
            if condition(delivered) { return true }
            let left = deadline - .now
            if left <= .zero { return false }
            _ = try Poller.wait(for: socket.descriptor.rawValue, events: .readable, timeout: min(left, .milliseconds(20)))
        }
    }

    func readAvailable() throws {
        while let (length, _) = try socket.receive(into: &buffer) {
            guard length <= buffer.count, let d = try? ControlDatagram.decode(Array(buffer[..<length])) else { continue }
            if !d.header.type.isReliable, d.header.type != .ack,
               let m = try? ControlMessage.decode(type: d.header.type, payload: d.payload) {
                delivered.append(m)
            }
            for case .delivered(let m) in channel.receive(d, now: .now) {
                delivered.append(m)
                if case .accept = m { acceptedConnectionID = d.header.connectionID }
            }
        }
    }

    var scores: [GameScore] {
        delivered.compactMap { m in
            guard case .data(let ch, let bytes) = m, ch == GameScore.channel else { return nil }
            return try? GameScore.decode(bytes)
        }
    }

    var denies: [ControlMessage.Deny] {
        delivered.compactMap { if case .deny(let d) = $0 { return d } else { return nil } }
    }

    var accepted: Bool { delivered.contains { if case .accept = $0 { return true } else { return false } } }
}

struct ClassroomTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
