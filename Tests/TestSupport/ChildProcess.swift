import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A process a test started: stdout and stderr collected, stopped by pid when the test is done
/// (``stop()`` or deinit, so a failing `#expect` never leaves it running).
public final class ChildProcess: Sendable {
    private let process: Process
    private let out = Collected()
    private let err = Collected()

    private final class Collected: Sendable {
        let bytes = Mutex<[UInt8]>([])
        /// Set when the pipe reached end of file: everything the child wrote is in `bytes`.
        let ended = Atomic<Bool>(false)
        func append(_ data: Data) {
            if data.isEmpty { ended.store(true, ordering: .releasing) }
            bytes.withLock { $0.append(contentsOf: data) }
        }
        var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
        var isComplete: Bool { ended.load(ordering: .acquiring) }
    }
    private let inPipe: Pipe?
    public var pid: Int32 { process.processIdentifier }

    /// Starts `executable` with `arguments`. With `stdin: true` the test writes to its stdin
    /// through ``write(_:)``; otherwise stdin is /dev/null.
    public init(_ executable: URL, _ arguments: [String], stdin: Bool = false,
                environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let o = Pipe(), e = Pipe()
        process.standardOutput = o
        process.standardError = e
        if stdin {
            let p = Pipe()
            process.standardInput = p
            inPipe = p
        } else {
            process.standardInput = FileHandle.nullDevice
            inPipe = nil
        }
        o.fileHandleForReading.readabilityHandler = { [out] h in
            let d = h.availableData
            out.append(d)
            if d.isEmpty { h.readabilityHandler = nil }
        }
        e.fileHandleForReading.readabilityHandler = { [err] h in
            let d = h.availableData
            err.append(d)
            if d.isEmpty { h.readabilityHandler = nil }
        }
        try process.run()
    }

    /// Runs the built `analog-remote` with `arguments`.
    public convenience init(analogRemote arguments: [String], stdin: Bool = false,
                            environment: [String: String] = [:]) throws {
        try self.init(Paths.analogRemote, arguments, stdin: stdin, environment: environment)
    }

    deinit { stop() }

    public var stdout: String { out.text }
    public var stderr: String { err.text }
    public var isRunning: Bool { process.isRunning }

    public func write(_ text: String) {
        inPipe?.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Closes the child's stdin (it sees EOF).
    public func closeStdin() {
        try? inPipe?.fileHandleForWriting.close()
    }

    public func signal(_ sig: Int32) {
        if process.isRunning { kill(process.processIdentifier, sig) }
    }

    /// Waits for the process to exit and for its output to be read to the end; returns its
    /// status, or nil if it is still running at `timeout` (the caller decides whether that is a
    /// failure). Trap: a child's grandchildren can hold the pipes open; after a short grace the
    /// output read so far is what ``stdout``/``stderr`` show.
    @discardableResult
    public func wait(timeout: Duration = .seconds(10)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline { return nil }
            usleep(2_000)
        }
        let grace = ContinuousClock.now + .seconds(2)
        while !(out.isComplete && err.isComplete) && ContinuousClock.now < grace { usleep(1_000) }
        return process.terminationStatus
    }

    /// Polls stdout+stderr until `predicate` holds or `timeout` passes. Returns whether it held.
    /// This waits for an event, never for a fixed time: it returns as soon as the text is there.
    public func waitForOutput(timeout: Duration = .seconds(10), _ predicate: (String, String) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if predicate(stdout, stderr) { return true }
            if !process.isRunning { return predicate(stdout, stderr) }
            usleep(2_000)
        }
        return predicate(stdout, stderr)
    }

    /// SIGTERM, then SIGKILL if it has not gone after a second. Safe to call twice.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if wait(timeout: .seconds(1)) == nil {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
