import Foundation
import SystemIO
#if canImport(Glibc)
import Glibc
#endif

/// A process a test started (a ``SpawnedProcess``, as the bench and the demo start theirs):
/// stdout and stderr collected, stopped by pid when the test is done (``stop()`` or deinit, so a
/// failing `#expect` never leaves it running).
public final class ChildProcess: Sendable {
    private let process: SpawnedProcess
    public var pid: Int32 { process.pid }

    /// Starts `executable` with `arguments`. With `stdin: true` the test writes to its stdin
    /// through ``write(_:)``; otherwise stdin is /dev/null.
    public init(_ executable: URL, _ arguments: [String], stdin: Bool = false,
                environment: [String: String] = [:]) throws {
        // No user config file (control.toml) reaches a child unless the test gives one.
        var environment = environment
        if environment["XDG_CONFIG_HOME"] == nil { environment["XDG_CONFIG_HOME"] = "/nonexistent/analog-remote-tests" }
        // Nor the user's state directory: what the children keep (robot ids, stop-all's known
        // receivers, the web certificate) goes to one directory of this test run's instead.
        if environment["XDG_STATE_HOME"] == nil { environment["XDG_STATE_HOME"] = Self.stateHome }
        process = try SpawnedProcess(executable: executable.path, arguments: arguments,
                                     label: executable.lastPathComponent, withStdin: stdin, environment: environment,
                                     keepStdout: .max, keepStderr: .max)
    }

    /// Runs the built `analog-remote` with `arguments`.
    public convenience init(analogRemote arguments: [String], stdin: Bool = false,
                            environment: [String: String] = [:]) throws {
        try self.init(Paths.analogRemote, arguments, stdin: stdin, environment: environment)
    }

    deinit { stop() }

    /// This test run's state home (`XDG_STATE_HOME`), shared by its children, removed at exit.
    static let stateHome: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-tests-\(getpid())-state").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-tests-\(getpid())-state").path
            try? FileManager.default.removeItem(atPath: path)
        }
        return path
    }()

    public var stdout: String { process.stdout }
    public var stderr: String { process.stderr }
    public var isRunning: Bool { !process.hasExited }

    public func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    /// Writes raw bytes (MIDI, binary) to the child's stdin.
    public func write(bytes: [UInt8]) {
        guard let fd = process.stdin?.rawValue else { return }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Closes the child's stdin (it sees EOF).
    public func closeStdin() {
        process.closeStdin()
    }

    public func signal(_ sig: Int32) {
        process.signal(sig)
    }

    /// Waits for the process to exit and for its output to be read to the end; returns its
    /// status (128 + N for a death by signal N), or nil if it is still running at `timeout` (the
    /// caller decides whether that is a failure). Trap: a child's grandchildren can hold the pipes
    /// open; after a short grace the output read so far is what ``stdout``/``stderr`` show.
    @discardableResult
    public func wait(timeout: Duration = .seconds(10)) -> Int32? {
        process.wait(timeout: timeout) ? process.exitStatus : nil
    }

    /// ``wait(timeout:)`` for an async test: the wait blocks a thread of its own, never one of
    /// the concurrency pool's (see ``offThePool(_:_:)``).
    public func exited(timeout: Duration = .seconds(10)) async -> Int32? {
        (try? await offThePool("wait-\(pid)") { self.wait(timeout: timeout) }) ?? nil
    }

    /// Polls stdout+stderr until `predicate` holds or `timeout` passes. Returns whether it held.
    /// This waits for an event, never for a fixed time: it returns as soon as the text is there.
    public func waitForOutput(timeout: Duration = .seconds(10), _ predicate: (String, String) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if predicate(stdout, stderr) { return true }
            if process.hasExited { return predicate(stdout, stderr) }
            usleep(2_000)
        }
        return predicate(stdout, stderr)
    }

    /// SIGSTOP, then waits until the kernel shows the process stopped (`T` in /proc/PID/stat):
    /// from then on it reads nothing, so datagrams sent now queue on its socket and arrive in one
    /// wake-up after ``signal(_:)`` with SIGCONT. Returns whether it stopped within `timeout`.
    public func pause(timeout: Duration = .seconds(10)) -> Bool {
        process.signal(SIGSTOP)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")"),
               stat[stat.index(close, offsetBy: 2)...].hasPrefix("T") { return true }
            usleep(2_000)
        }
        return false
    }

    /// SIGTERM, then SIGKILL if it has not gone after a second. Safe to call twice.
    public func stop() {
        process.stop(grace: .seconds(1))
    }
}
