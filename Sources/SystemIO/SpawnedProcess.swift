#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The one way this package starts a process (the bench's children, the demo's three commands).
/// stdout and stderr are read by a thread each until end of file (a child logging thousands of
/// lines never blocks on a full pipe); stdin is /dev/null or a pipe. SIGINT, SIGTERM and SIGPIPE
/// are back to their default action and unblocked in the child (a parent that ignores or blocks
/// them would pass that on), and no other descriptor of the parent is inherited. Stopped by pid — SIGTERM, then SIGKILL — by ``stop(grace:meanwhile:)``
/// or at deinit, so an error in the parent never leaves it running.
package final class SpawnedProcess: Sendable {
    package let pid: pid_t
    package let label: String
    /// The write end of its stdin, when it has one.
    package let stdin: Descriptor?
    private let out: Collector
    private let err: Collector
    private let status = Mutex<Int32?>(nil)

    /// Output collected by a thread until end of file. Only the first `keep` bytes are kept, but
    /// every line is counted. `onData` runs on that thread after each read.
    ///
    /// Trap: the reader blocks in `read` for the child's whole life, so it is a thread of its own
    /// (a ``LoopThread``), which starts at once. On Dispatch's pool, where it used to run, it
    /// needed a free worker, and the pool stops at 255 threads (measured: the 256th blocked block
    /// never starts). A clean exit's summary line was once missing on a loaded machine (the
    /// output not read within `join`'s grace); whether a late reader was the cause is not known.
    final class Collector: Sendable {
        private let box = Box()
        private let reader: LoopThread

        private final class Box: Sendable {
            let value = Mutex<(bytes: [UInt8], lines: Int)>(([], 0))
        }

        init(fd: Descriptor, keep: Int, reader: LoopThread, onData: (@Sendable () -> Void)?) {
            self.reader = reader
            reader.start { [box] in
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
                    onData?()
                }
                fd.close()
                onData?()
            }
        }

        /// A reader for `label`'s stream (made before the child is started: this can fail).
        static func thread(_ label: String) throws(SystemError) -> LoopThread {
            try LoopThread(name: label, stackSize: 256 * 1024)
        }

        var text: String { box.value.withLock { String(decoding: $0.bytes, as: UTF8.self) } }
        var lines: Int { box.value.withLock { $0.lines } }

        /// Waits at most `timeout` for end of file; returns whether it came.
        func join(timeout: Duration) -> Bool {
            reader.wait(timeout: timeout)
        }
    }

    /// Starts `executable arguments…` (a path, not looked up on PATH) with the parent's
    /// environment plus `environment`. Only the first `keepStdout`/`keepStderr` bytes are kept.
    /// `onOutput` is called (on a reader thread) whenever stdout or stderr grew.
    package init(executable: String, arguments: [String], label: String, withStdin: Bool = false,
                environment: [String: String] = [:], keepStdout: Int = 1 << 20, keepStderr: Int = 64 * 1024,
                onOutput: (@Sendable () -> Void)? = nil) throws(SystemError) {
        self.label = label
        let outReader = try Collector.thread("\(label) stdout"), errReader = try Collector.thread("\(label) stderr")
        var stdinPipe: [Int32] = [-1, -1], outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0, !withStdin || pipe(&stdinPipe) == 0 else {
            let e = errno
            for fd in outPipe + errPipe + stdinPipe where fd >= 0 { close(fd) }
            throw SystemError(call: "pipe", errno: e, subject: label)
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
        // Nothing else the parent has open reaches the child (not only our pipes: a pipe another
        // thread of the parent owns would never see end of file while a child holds a copy).
        Self.closeOthers(&actions)

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
        let envp: [UnsafeMutablePointer<CChar>?] = Self.environment(adding: environment).map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        for fd in [stdinPipe[0], outPipe[1], errPipe[1]] where fd >= 0 { close(fd) }
        guard rc == 0 else {
            for fd in [stdinPipe[1], outPipe[0], errPipe[0]] where fd >= 0 { close(fd) }
            throw SystemError(call: "posix_spawn", errno: rc, subject: executable)
        }
        self.pid = pid
        stdin = withStdin ? Descriptor(adopting: stdinPipe[1], label: "\(label) stdin") : nil
        out = Collector(fd: Descriptor(adopting: outPipe[0], label: "\(label) stdout"), keep: keepStdout,
                        reader: outReader, onData: onOutput)
        err = Collector(fd: Descriptor(adopting: errPipe[0], label: "\(label) stderr"), keep: keepStderr,
                        reader: errReader, onData: onOutput)
    }

    deinit { stop(grace: .seconds(2)) }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Glibc's module map hides.
    private static let closeFrom: CloseFrom? = {
        // A nil handle is glibc's RTLD_DEFAULT: the symbol as the program links it.
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    /// Adds "close every descriptor above stderr" to `actions`: with glibc's closefrom action, or
    /// else one close per descriptor open now (/proc/self/fd; one opened meanwhile may slip through).
    private static func closeOthers(_ actions: inout posix_spawn_file_actions_t) {
        if let closeFrom, closeFrom(&actions, STDERR_FILENO + 1) == 0 { return }
        guard let dir = opendir("/proc/self/fd") else { return }
        defer { closedir(dir) }
        let own = dirfd(dir)
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let fd = Int32(name), fd > STDERR_FILENO, fd != own { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

    /// `KEY=value` for this process's environment with `overrides` replacing or adding keys.
    static func environment(adding overrides: [String: String]) -> [String] {
        var entries: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            let key = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? text
            if overrides[key] == nil { entries.append(text) }
            index += 1
        }
        return entries + overrides.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }

    package var stdout: String { out.text }
    package var stderr: String { err.text }
    /// Lines written to stderr so far (log lines).
    package var stderrLines: Int { err.lines }

    /// Reaps the child if it has exited; true once it has.
    package var hasExited: Bool {
        status.withLock { status in
            if status != nil { return true }
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid {
                status = raw
                return true
            }
            return false
        }
    }

    /// The exit code (or 128 + signal), once exited.
    package var exitStatus: Int32? {
        guard hasExited, let raw = status.withLock({ $0 }) else { return nil }
        let signal = raw & 0x7F
        return signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
    }

    package func signal(_ sig: Int32) {
        if !hasExited { kill(pid, sig) }
    }

    /// Closes its stdin: a command reading stdin sees end of file and stops.
    package func closeStdin() {
        stdin?.close()
    }

    /// Waits until it exits, calling `meanwhile` between checks (e.g. to answer the board it is
    /// shutting down); returns whether it exited in time. Its output is then read to the end.
    @discardableResult
    package func wait(timeout: Duration, meanwhile: () -> Void = {}) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !hasExited {
            if ContinuousClock.now >= deadline { return false }
            meanwhile()
            usleep(1_000)
        }
        // End of file comes at once unless a grandchild holds the pipes. The bound is generous:
        // a stalled machine once kept a clean exit's last line unread past a 2 s bound.
        _ = out.join(timeout: .seconds(10))
        _ = err.join(timeout: .seconds(10))
        return true
    }

    /// SIGTERM, then SIGKILL after `grace`. Safe to call twice.
    package func stop(grace: Duration, meanwhile: () -> Void = {}) {
        guard !hasExited else { return }
        kill(pid, SIGTERM)
        if !wait(timeout: grace, meanwhile: meanwhile) {
            kill(pid, SIGKILL)
            _ = wait(timeout: .seconds(5))
        }
    }
}
