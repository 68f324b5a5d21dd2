#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import BoardFirmware
import BoardProtocol
import BoardSimulator
import SerialTTY
import Synchronization
import SystemIO

/// A line the board took, stamped with the time the read that brought its first byte returned.
struct StampedLine: Sendable, Hashable {
    let start: Int64
    let bytes: [UInt8]
}

/// The board end of a pseudo-terminal, answered by the bench: a receiver opens ``path`` with
/// `--board serial:PATH`, and every byte it writes is fed to a ``SimulatedBoard`` (the kit's
/// firmware: per-character echo, `\r\n`, reply, prompt `\r\n>`) whose answer is written back at
/// once (no wire timing: the floor is the subject here). Without the answer the board link would
/// wait for its reply timeout before the next command.
///
/// Each line is stamped with the time the `read(2)` that delivered its first byte returned —
/// the moment the first byte of a `W` is readable on the board side.
struct BoardSide: Sendable {
    let pty: PseudoTerminal
    private var board = SimulatedBoard(profile: .kit, framing: .text)
    private var partial: [UInt8] = []
    private var partialStart: Int64 = 0
    private var buffer = [UInt8](repeating: 0, count: 4096)

    init() throws(BenchError) {
        do {
            pty = try PseudoTerminal()
        } catch {
            throw .setup("cannot create a pseudo-terminal for the board: \(error)")
        }
        _ = board.takeOutput()   // the boot prompt: a CDC board opened later never shows it
    }

    var path: String { pty.slavePath }
    var descriptor: Int32 { pty.master.rawValue }

    /// Reads what is waiting (the caller polled), answers it, and returns the lines completed.
    mutating func service() throws(BenchError) -> [StampedLine] {
        let fd = descriptor
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        let now = Monotonic.now()
        if n < 0 {
            if errno == EAGAIN || errno == EINTR { return [] }
            // EIO: no client has the slave open (between two receivers); nothing to answer.
            if errno == EIO { return [] }
            throw .measurement("board pty: read: \(SystemError(call: "read", errno: errno).reason)")
        }
        var lines: [StampedLine] = []
        for b in buffer[..<n] {
            if partial.isEmpty { partialStart = now }
            partial.append(b)
            if BoardCommand.isTerminator(b) {
                lines.append(StampedLine(start: partialStart, bytes: partial))
                partial.removeAll(keepingCapacity: true)
            }
        }
        board.receive(buffer[..<n])
        let answer = board.takeOutput()
        if !answer.isEmpty {
            do {
                try pty.master.writeAll(answer)
            } catch {
                throw .measurement("board pty: write: \(error.reason)")
            }
        }
        return lines
    }

    /// Waits until the board side is readable or `deadline` (monotonic ns); false on timeout.
    func waitReadable(until deadline: Int64) -> Bool {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            let left = deadline - Monotonic.now()
            if left <= 0 { return false }
            let rc = poll(&fds, 1, Int32(clamping: (left + 999_999) / 1_000_000))
            if rc > 0 { return true }
            if rc < 0 && errno != EINTR { return false }
        }
    }

    /// Answers everything until `expected` arrives; returns the stamp of its first byte, or nil
    /// if it did not come before `deadline`.
    mutating func waitFor(_ expected: [UInt8], until deadline: Int64) throws(BenchError) -> Int64? {
        while waitReadable(until: deadline) {
            for line in try service() where line.bytes == expected { return line.start }
        }
        return nil
    }

    /// Answers everything until `deadline`: between two samples the board answers at once, as
    /// board-sim does. Trap: a board left unanswered during the pause held a sensor read sent
    /// then until the next sample began, and the write that sample caused waited behind it
    /// (about 1 % of samples at 10 reads a second: right at the p99).
    mutating func serve(until deadline: Int64) throws(BenchError) {
        while waitReadable(until: deadline) { _ = try service() }
    }

    /// ``serve(until:)`` for several boards at once.
    static func serve(_ boards: inout [BoardSide], until deadline: Int64) throws(BenchError) {
        var fds = boards.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        while true {
            let left = deadline - Monotonic.now()
            if left <= 0 { return }
            for k in fds.indices { fds[k].revents = 0 }
            let rc = poll(&fds, nfds_t(fds.count), Int32(clamping: (left + 999_999) / 1_000_000))
            if rc < 0 && errno != EINTR { return }
            for k in fds.indices where fds[k].revents & Int16(POLLIN) != 0 { _ = try boards[k].service() }
        }
    }

    /// Answers everything until the link has been quiet for `quiet` (ns) or `deadline` passes.
    /// The receiver's sensor reads (`R 07 0b`, 10 a second by default) do not count: the link
    /// is never quiet for 100 ms while they come, and waiting out the deadline instead would
    /// trip the receiver's failsafe (no state for 250 ms) before the first sample.
    mutating func settle(quiet: Int64, until deadline: Int64) throws(BenchError) {
        var lastActivity = Monotonic.now()
        while Monotonic.now() < deadline {
            guard waitReadable(until: min(deadline, lastActivity + quiet)) else { return }
            let lines = try service()
            if lines.isEmpty || lines.contains(where: { $0.bytes != Self.sensorRead }) { lastActivity = Monotonic.now() }
        }
    }

    static let sensorRead = SensorBlock.read.line
}

/// A ``BoardSide`` answered by its own thread, for the scale runs: every `W` line's stamp and
/// bytes are kept for matching afterwards.
final class BackgroundBoard: Sendable {
    let path: String
    private let shared = Shared()
    private let stop: EventFlag
    private let thread: BenchThread

    init(_ side: BoardSide) throws(BenchError) {
        path = side.path
        do { stop = try EventFlag() } catch { throw .setup("board thread: \(error)") }
        let (stopFD, shared) = (stop.descriptor.rawValue, shared)
        thread = BenchThread(name: "bench board") {
            var side = side
            var fds = [pollfd(fd: side.descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            while true {
                fds[0].revents = 0
                fds[1].revents = 0
                let rc = poll(&fds, 2, 100)
                if rc < 0 && errno != EINTR { shared.failure.withLock { $0 = "board thread: poll failed" }; return }
                if fds[1].revents != 0 { return }
                if fds[0].revents & Int16(POLLIN) != 0 {
                    let got: [StampedLine]
                    do throws(BenchError) {
                        got = try side.service()
                    } catch {
                        shared.failure.withLock { $0 = error.description }
                        return
                    }
                    let writes = got.filter { $0.bytes.first == UInt8(ascii: "W") }
                    if !writes.isEmpty { shared.lines.withLock { $0 += writes } }
                } else if fds[0].revents != 0 {
                    // Hang-up: no client has the slave open (the receiver has not opened it yet
                    // or has exited). Poll reports it at once; do not spin.
                    Monotonic.sleep(nanoseconds: 1_000_000)
                }
            }
        }
    }

    private final class Shared: Sendable {
        let lines = Mutex<[StampedLine]>([])
        let failure = Mutex<String?>(nil)
    }

    /// Every `W` line so far, oldest first.
    var writes: [StampedLine] { shared.lines.withLock { $0 } }
    var error: String? { shared.failure.withLock { $0 } }

    func finish() {
        stop.raise()
        thread.join()
    }
}
