#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Synchronization
import SystemIO

/// A child `analog-remote` the bench started (a receiver, a controller): stdout and stderr are
/// read by a thread each (a receiver logging thousands of lines must never block on a full
/// pipe), stdin is a pipe when asked for. Stopped by pid — SIGTERM, then SIGKILL — by
/// ``stop(grace:)`` or at deinit, so an error in the bench never leaves it running.
final class Child {
    let pid: pid_t
    let label: String
    /// The write end of its stdin, when it has one.
    private(set) var stdin: Descriptor?
    private let out: Collector
    private let err: Collector
    private var status: Int32?

    /// Output collected by a thread until end of file. Only the first `keep` bytes are kept, but
    /// every line is counted.
    final class Collector: Sendable {
        private let box: Box
        private let thread: BenchThread

        private final class Box: Sendable {
            let value = Mutex<(bytes: [UInt8], lines: Int)>(([], 0))
        }

        init(fd: Descriptor, keep: Int) {
            let box = Box()
            self.box = box
            thread = BenchThread(name: "bench child output") {
                var buffer = [UInt8](repeating: 0, count: 16_384)
                let raw = fd.rawValue
                while true {
                    let n = read(raw, &buffer, buffer.count)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    box.value.withLock { v in
                        v.lines += buffer[..<n].count { $0 == 0x0A }
                        if v.bytes.count < keep { v.bytes += buffer[..<min(n, keep - v.bytes.count)] }
                    }
                }
                fd.close()
            }
        }

        var text: String { box.value.withLock { String(decoding: $0.bytes, as: UTF8.self) } }
        var lines: Int { box.value.withLock { $0.lines } }
        func join(timeout: Duration) -> Bool { thread.join(timeout: timeout) }
    }

    /// Starts `executable arguments…`. SIGINT/SIGTERM are back to their default action and
    /// unblocked in the child (the bench ignores them itself, and that would be inherited).
    init(executable: String, arguments: [String], label: String, withStdin: Bool = false) throws(BenchError) {
        self.label = label
        var stdinPipe: [Int32] = [-1, -1], outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0, !withStdin || pipe(&stdinPipe) == 0 else {
            throw .setup("\(label): pipe: \(SystemError(call: "pipe", errno: errno).reason)")
        }
        for fd in [outPipe[0], errPipe[0], stdinPipe[1]] where fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if withStdin {
            posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], STDIN_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO)
        for fd in [stdinPipe[0], outPipe[1], errPipe[1]] where fd > STDERR_FILENO {
            posix_spawn_file_actions_addclose(&actions, fd)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t(), empty = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        for fd in [stdinPipe[0], outPipe[1], errPipe[1]] where fd >= 0 { close(fd) }
        guard rc == 0 else {
            for fd in [stdinPipe[1], outPipe[0], errPipe[0]] where fd >= 0 { close(fd) }
            throw .setup("\(label): cannot start \(executable): \(SystemError(call: "posix_spawn", errno: rc).reason)")
        }
        self.pid = pid
        stdin = withStdin ? Descriptor(adopting: stdinPipe[1], label: "\(label) stdin") : nil
        out = Collector(fd: Descriptor(adopting: outPipe[0], label: "\(label) stdout"), keep: 1 << 20)
        err = Collector(fd: Descriptor(adopting: errPipe[0], label: "\(label) stderr"), keep: 64 * 1024)
    }

    deinit { stop(grace: .seconds(2)) }

    var stdout: String { out.text }
    var stderr: String { err.text }
    /// Lines written to stderr so far (log lines).
    var stderrLines: Int { err.lines }

    /// Waits for a line of stdout that starts with `prefix`; returns the rest of it.
    func waitForLine(prefix: String, timeout: Duration, interruption: Interruption) throws(BenchError) -> Substring {
        let deadline = ContinuousClock.now + timeout
        while true {
            try interruption.check()
            for line in stdout.split(separator: "\n") where line.hasPrefix(prefix) {
                return line.dropFirst(prefix.count)
            }
            if hasExited || ContinuousClock.now >= deadline {
                let why = hasExited ? "exited (status \(exitStatus ?? -1))" : "said nothing for \(timeout)"
                let said = stderr.split(separator: "\n").suffix(3).joined(separator: " | ")
                throw .setup("\(label) \(why) before printing `\(prefix)…`\(said.isEmpty ? "" : ": \(said)")")
            }
            Monotonic.sleep(nanoseconds: 2_000_000)
        }
    }

    /// Reaps the child if it has exited; true once it has.
    var hasExited: Bool {
        if status != nil { return true }
        var raw: Int32 = 0
        if waitpid(pid, &raw, WNOHANG) == pid {
            status = raw
            return true
        }
        return false
    }

    /// The exit code (or 128 + signal), once exited.
    var exitStatus: Int32? {
        guard hasExited, let raw = status else { return nil }
        let signal = raw & 0x7F
        return signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
    }

    func signal(_ sig: Int32) {
        if !hasExited { kill(pid, sig) }
    }

    /// Closes its stdin: a controller reading stdin sees end of file and stops.
    func closeStdin() {
        stdin?.close()
    }

    /// Waits until it exits, calling `meanwhile` between checks (e.g. to answer the board it is
    /// shutting down); returns whether it exited in time. Its output is then read to the end.
    @discardableResult
    func wait(timeout: Duration, meanwhile: () -> Void = {}) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !hasExited {
            if ContinuousClock.now >= deadline { return false }
            meanwhile()
            Monotonic.sleep(nanoseconds: 1_000_000)
        }
        _ = out.join(timeout: .seconds(2))
        _ = err.join(timeout: .seconds(2))
        return true
    }

    /// SIGTERM, then SIGKILL after `grace`. Safe to call twice.
    func stop(grace: Duration, meanwhile: () -> Void = {}) {
        guard !hasExited else { return }
        kill(pid, SIGTERM)
        if !wait(timeout: grace, meanwhile: meanwhile) {
            kill(pid, SIGKILL)
            _ = wait(timeout: .seconds(5))
        }
    }

    /// A receiver child: `analog-remote receive …`, or, when the environment variable
    /// `BENCH_RECEIVER_WRAPPER` is set (e.g. `valgrind --tool=callgrind`), that command with
    /// the receiver's command line appended — how BENCHMARKS.md's profiles were taken.
    static func receiver(executable: String, arguments: [String]) throws(BenchError) -> Child {
        let wrapper = ProcessInfo.processInfo.environment["BENCH_RECEIVER_WRAPPER"]?
            .split(separator: " ").map(String.init) ?? []
        guard let tool = wrapper.first else {
            return try Child(executable: executable, arguments: ["receive"] + arguments, label: "receiver")
        }
        let path = tool.hasPrefix("/") ? tool : try which(tool)
        return try Child(executable: path, arguments: Array(wrapper.dropFirst()) + [executable, "receive"] + arguments,
                         label: "receiver (under \(tool))")
    }

    static func which(_ name: String) throws(BenchError) -> String {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw .setup("BENCH_RECEIVER_WRAPPER: \(name) is not on PATH")
    }

    /// The path of the running executable (this `analog-remote`).
    static func ownExecutable() throws(BenchError) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { throw .setup("cannot find this executable (/proc/self/exe)") }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
