import Foundation
import RemoteWire
import Synchronization
import SystemIO
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A UDP socket on 127.0.0.1 that records every datagram with its arrival time.
final class PacketCapture {
    let socket: UDPSocket
    let peer: String
    private(set) var packets: [(bytes: [UInt8], at: ContinuousClock.Instant)] = []
    private var buffer = [UInt8](repeating: 0, count: 64)

    init() throws {
        socket = try UDPSocket.bind(port: 0, host: "127.0.0.1")
        peer = "127.0.0.1:\(try socket.localAddress().port)"
    }

    /// The next datagram, or nil after `timeout`.
    @discardableResult
    func next(timeout: Duration = .seconds(5)) throws -> [UInt8]? {
        guard let (n, _) = try socket.receive(into: &buffer, timeout: timeout) else { return nil }
        let bytes = Array(buffer[..<min(n, buffer.count)])
        packets.append((bytes, .now))
        return bytes
    }

    /// Receives until a datagram satisfies `predicate` (true) or `timeout` passes (false).
    func waitFor(timeout: Duration = .seconds(5), _ predicate: ([UInt8]) -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let p = try next(timeout: deadline - .now) else { return false }
            if predicate(p) { return true }
        }
        return false
    }

    func waitFor(_ state: ControllerState, timeout: Duration = .seconds(5)) throws -> Bool {
        let want = StatePacket.encode(state)
        return try waitFor(timeout: timeout) { $0 == want }
    }

    /// Everything already queued: call it once the sender has exited. Bounded, so a sender that
    /// is still running fails the test instead of hanging it.
    func drain() throws {
        let limit = ContinuousClock.now + .seconds(2)
        while try next(timeout: .milliseconds(50)) != nil {
            if ContinuousClock.now > limit {
                Issue.record("still receiving packets: the sender has not stopped")
                return
            }
        }
    }

    var states: [ControllerState] { packets.compactMap { try? StatePacket.decode($0.bytes) } }
}

/// Polls `condition` until it holds or `timeout` passes: for output that a reader thread
/// collects a little after the child wrote it (or exited).
func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

extension ControllerState {
    var hex: String { Hex.string(StatePacket.encode(self)) }
}

/// The golden vectors (vectors/state-packet.json), valid section only.
struct ValidVectors: Decodable {
    struct Valid: Decodable { let name, angle, buttons, hex: String }
    let valid: [Valid]

    static func load() throws -> [Valid] {
        try JSONDecoder().decode(ValidVectors.self, from: Data(contentsOf: Paths.repositoryFile("vectors/state-packet.json"))).valid
    }
}

/// `analog-remote` running on a pseudo-terminal: the slave is its stdin, stdout and stderr, the
/// test holds the master (what a terminal emulator would hold). A thread drains the master so the
/// child never blocks writing its status line; ``output`` is everything the child wrote.
final class PtyChild {
    let master: Int32
    let slave: Int32
    let process = Process()
    let before: termios
    private let collected = Collected()
    private let reader: Thread

    final class Collected: Sendable {
        let bytes = Mutex<[UInt8]>([])
        let stop = Atomic<Bool>(false)
    }

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        var m: Int32 = -1, s: Int32 = -1
        var size = winsize(ws_row: 24, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0)
        guard openpty(&m, &s, nil, nil, &size) == 0 else { throw SystemError(call: "openpty", errno: errno) }
        master = m
        slave = s
        var t = termios()
        tcgetattr(s, &t)
        before = t

        process.executableURL = Paths.analogRemote
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let handle = FileHandle(fileDescriptor: s, closeOnDealloc: false)
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle

        let collected = collected
        let fd = m
        reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            while !collected.stop.load(ordering: .acquiring) {
                fds[0].revents = 0
                guard poll(&fds, 1, 20) > 0 else { continue }
                let n = read(fd, &buffer, buffer.count)
                if n > 0 { collected.bytes.withLock { $0 += buffer[..<n] } } else { usleep(10_000) }
            }
        }
        reader.start()
        try process.run()
    }

    private var masterOpen = true

    deinit {
        stop()
        closeMaster()
        close(slave)
    }

    /// What closing a terminal window does: the child's terminal hangs up.
    func hangUp() { closeMaster() }

    private func closeMaster() {
        guard masterOpen else { return }
        masterOpen = false
        collected.stop.store(true, ordering: .releasing)
        usleep(50_000)   // let the reader leave poll before its descriptor goes
        close(master)
    }

    var output: String { collected.bytes.withLock { String(decoding: $0, as: UTF8.self) } }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// The slave's settings now.
    var current: termios {
        var t = termios()
        tcgetattr(slave, &t)
        return t
    }

    var inRawMode: Bool { current.c_lflag & tcflag_t(ECHO | ICANON) == 0 }

    /// Polls `condition` until true or `timeout` (an event, not a fixed wait).
    func waitUntil(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }

    func signal(_ sig: Int32) { if process.isRunning { kill(process.processIdentifier, sig) } }

    /// Waits for exit; nil if still running at `timeout`.
    func wait(timeout: Duration = .seconds(10)) -> (reason: Process.TerminationReason, status: Int32)? {
        guard waitUntil(timeout: timeout, { !process.isRunning }) else { return nil }
        return (process.terminationReason, process.terminationStatus)
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if wait(timeout: .seconds(1)) == nil {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The settings a person would notice if they were not restored.
    static func same(_ a: termios, _ b: termios) -> Bool {
        var x = a, y = b
        let ccEqual = withUnsafeBytes(of: &x.c_cc) { p in withUnsafeBytes(of: &y.c_cc) { q in p.elementsEqual(q) } }
        return a.c_iflag == b.c_iflag && a.c_oflag == b.c_oflag && a.c_cflag == b.c_cflag && a.c_lflag == b.c_lflag && ccEqual
    }
}
