#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import Dispatch
import Logging
import Receiver
import Synchronization
import SystemIO

/// The real receiver — `ReceiverService` with the real board link (`BoardConnection` over
/// `serial:`), exactly what `analog-remote receive` builds — on a thread of the bench.
///
/// Its board sink is wrapped by ``StampingSink``, which notes when the receive loop hands values
/// to the board link: that splits the receive path in two stages (datagram → decision, and
/// decision → bytes on the board side) without touching the receiver's code.
///
/// Traps handled here:
/// - the service prints `receiving on udp port N` and its summary on fd 1; while it runs, fd 1
///   is a pipe (the bench's own progress goes to stderr) and the summary is read from it;
/// - it stops only on SIGINT/SIGTERM: ``stop(board:)`` sends the process a SIGTERM through
///   ``Interruption`` and answers the board while the service writes the safe state.
final class InProcessReceiver {
    let port: UInt16
    private let slots: Slots
    private let thread: BenchThread
    private let capture: StdoutCapture
    private let interruption: Interruption
    private(set) var summary: String?

    /// `whileStarting` runs over and over until the service is built: the receiver probes the
    /// board before it is built, so the bench answers the board meanwhile.
    init(boardPath: String, interruption: Interruption, whileStarting: () -> Void = {}) throws(BenchError) {
        self.interruption = interruption
        port = try Self.freePort()
        var configuration = ReceiverConfiguration()
        configuration.port = port
        configuration.advertise = false
        let logger = Logger(label: "bench.receive") { ConsoleLogHandler(label: $0, level: .warning, format: .text, status: nil) }
        let slots = Slots()
        self.slots = slots
        let (mapping, fixed) = (configuration.mapping, configuration)
        capture = try StdoutCapture()
        // The service is not Sendable: it is built on the thread that runs it, and the bench
        // waits until it is built (or failed) before going on.
        let built = DispatchSemaphore(value: 0)
        thread = BenchThread(name: "bench receiver") {
            let service: ReceiverService
            do {
                service = try ReceiverService(configuration: fixed, status: StatusLine(quiet: true), logger: logger) { events throws(CommandFailure) in
                    let inner = try BoardSinks.open(spec: "serial:\(boardPath)", mapping: mapping, events: events, traceBoard: false)
                    let stamping = StampingSink(inner: inner)
                    slots.sink.withLock { $0 = stamping }
                    return stamping
                }
            } catch {
                slots.outcome.withLock { $0 = "in-process receiver: \(error)" }
                built.signal()
                return
            }
            built.signal()
            do throws(CommandFailure) {
                let status = try service.run()
                if status != .done { slots.outcome.withLock { $0 = "in-process receiver ended with \(status)" } }
            } catch {
                slots.outcome.withLock { $0 = "in-process receiver: \(error.message)" }
            }
        }
        while built.wait(timeout: .now() + .milliseconds(2)) == .timedOut { whileStarting() }
        if let problem = slots.outcome.withLock({ $0 }) {
            thread.join()
            _ = capture.finish()
            throw .setup(problem)
        }
    }

    /// When the receive loop last handed values to the board link (monotonic ns), 0 if never.
    var lastHandOff: Int64 { slots.sink.withLock { $0?.lastHandOff ?? 0 } }

    /// What the receiver's thread and its board factory hand back.
    private final class Slots: Sendable {
        let sink = Mutex<StampingSink?>(nil)
        let outcome = Mutex<String?>(nil)
    }

    /// SIGTERM to the service, answering the board while it writes the safe state; then fd 1
    /// is given back and the summary line read.
    func stop(board: inout BoardSide) throws(BenchError) {
        interruption.stopInProcessReceiver()
        let deadline = Monotonic.now() + 10_000_000_000
        while !thread.join(timeout: .milliseconds(1)) {
            if board.waitReadable(until: Monotonic.now() + 1_000_000) { _ = try board.service() }
            if Monotonic.now() > deadline {
                // Not joined: the thread is left blocked in poll; the bench exits with an error.
                throw .measurement("the in-process receiver did not stop within 10 s of SIGTERM")
            }
        }
        let printed = capture.finish()
        summary = printed.split(separator: "\n").last { $0.hasPrefix("summary ") }.map(String.init)
        if let problem = slots.outcome.withLock({ $0 }) { throw .measurement(problem) }
    }

    /// A UDP port that was free a moment ago (bound with port 0 and released at once). The
    /// service binds it right after; on this quiet loopback nobody takes it in between.
    static func freePort() throws(BenchError) -> UInt16 {
        do {
            let probe = try UDPSocket.bind(port: 0)
            defer { probe.close() }
            return try probe.localAddress().port
        } catch {
            throw .setup("cannot find a free UDP port: \(error)")
        }
    }
}

/// Passes everything to the real board link and notes the time of the latest hand-off.
final class StampingSink: BoardSink {
    let inner: any BoardSink
    private let stamp = Atomic<Int64>(0)

    init(inner: any BoardSink) { self.inner = inner }

    var lastHandOff: Int64 { stamp.load(ordering: .acquiring) }

    func setDesired(_ values: [UInt8: UInt8]) {
        stamp.store(Monotonic.now(), ordering: .releasing)
        inner.setDesired(values)
    }

    func writeSafeState(timeout: Duration) -> Bool { inner.writeSafeState(timeout: timeout) }
    func close() { inner.close() }
}

/// fd 1 pointed at a pipe until ``finish()``, which puts it back and returns what was written.
/// Only for the in-process receiver's two stdout lines: the pipe holds 64 KiB, far more.
final class StdoutCapture {
    private let saved: Int32
    private let readEnd: Int32
    private var finished = false

    init() throws(BenchError) {
        var fds: [Int32] = [-1, -1]
        do {
            try Syscall.call("pipe") { pipe(&fds) }
            saved = try Syscall.call("dup", subject: "stdout") { dup(STDOUT_FILENO) }
            try Syscall.call("dup2", subject: "stdout") { dup2(fds[1], STDOUT_FILENO) }
        } catch {
            for fd in fds where fd >= 0 { close(fd) }
            throw .setup("cannot capture the in-process receiver's stdout: \(error)")
        }
        readEnd = fds[0]
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
        close(fds[1])
    }

    deinit { _ = finish() }

    func finish() -> String {
        guard !finished else { return "" }
        finished = true
        dup2(saved, STDOUT_FILENO)
        close(saved)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(readEnd, &buffer, buffer.count)
            if n <= 0 { break }
            bytes += buffer[..<n]
        }
        close(readEnd)
        return String(decoding: bytes, as: UTF8.self)
    }
}
