#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// Turns SIGINT/SIGTERM (and optionally SIGHUP) into something a poll loop can wait on: a
/// descriptor that becomes readable, and the signal number that arrived first.
///
/// Contract: once a signal has been watched in this process its default action (terminate) is
/// gone for good, so the process must react to ``readableDescriptor`` — write the safe state,
/// then exit with ``exitCode``. The hub delivers the signal whatever thread it hit; any number
/// of watchers may watch the same signal (``SignalHub`` fans it out).
package final class SignalWatcher: Sendable {
    private let wake: EventFlag
    private let caught = CaughtSignal()
    private let registration: Int

    private final class CaughtSignal: Sendable {
        let value = Atomic<Int32>(0)
    }

    /// Returns once the signals are really caught (see ``SignalHub/register(_:handler:)``).
    package init(signals: [Int32] = [SIGINT, SIGTERM]) throws(SystemError) {
        let wake = try EventFlag()
        self.wake = wake
        registration = SignalHub.register(signals) { [caught] sig in
            _ = caught.value.compareExchange(expected: 0, desired: sig, ordering: .acquiringAndReleasing)
            wake.raise()
        }
    }

    deinit { SignalHub.unregister(registration) }

    /// Readable once a signal has arrived.
    package var readableDescriptor: Int32 { wake.descriptor.rawValue }
    /// The first signal caught, or nil.
    package var signal: Int32? { let s = caught.value.load(ordering: .acquiring); return s == 0 ? nil : s }
    /// The conventional exit status for the caught signal: 128 + number (130 SIGINT, 143 SIGTERM).
    package var exitCode: Int32 { 128 + (signal ?? 0) }
    /// Acts as if `sig` had arrived (first one wins): how an embedding program stops a loop
    /// that watches this, without sending a real signal to the whole process.
    package func raise(_ sig: Int32) {
        _ = caught.value.compareExchange(expected: 0, desired: sig, ordering: .acquiringAndReleasing)
        wake.raise()
    }
    /// Blocks until a signal arrives (for tools with nothing else to wait on).
    package func wait() { while signal == nil { _ = try? Poller.wait(for: readableDescriptor, events: .readable, timeout: nil) } }
}

/// One handler per signal for the whole process, fanning each signal out to every registered
/// watcher on a thread of its own (`signals`).
///
/// The handler only writes the signal's number to a pipe (`write` is async-signal-safe; the
/// pipe's write end is set up before any handler is installed); the thread reads the pipe and
/// calls the watchers. Installed with `sigaction`, a handler is in place when ``register(_:handler:)``
/// returns, so no signal after that is lost; `exec` resets it to the default action, so a child
/// process does not inherit it (an ignored signal would be).
///
/// Traps: not libdispatch's signal sources. They are served by libdispatch's manager thread,
/// which asks for nice -4 as it starts; in an unprivileged service that is refused and logged
/// ("Failed to set thread priority for worker thread: pqc=… errno=13") at every start. And a
/// signal whose pipe is full (64 KiB of signals unread) is dropped: the first one of a kind is
/// what every watcher acts on.
package enum SignalHub {
    private struct State {
        var next = 0
        var handlers: [Int: (signals: Set<Int32>, deliver: @Sendable (Int32) -> Void)] = [:]
        var installed: Set<Int32> = []
        var reader: LoopThread?
    }

    private static let state = Mutex(State())

    /// Calls `handler` (on the hub's thread) for every one of `signals` that arrives, from the
    /// moment this returns; returns a token for ``unregister(_:)``.
    package static func register(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) -> Int {
        state.withLock { s in
            let id = s.next
            s.next += 1
            s.handlers[id] = (Set(signals), handler)
            if s.reader == nil, let pipe = SignalPipe.open(), let reader = try? LoopThread(name: "signals"),
               reader.start({ SignalPipe.read(pipe.read) { deliver($0) } }), !reader.hasEnded {
                s.reader = reader
            }
            // Without the thread (no pipe or thread to be had) a signal keeps its default action:
            // SIGTERM still ends the process, rather than vanishing into a handler nobody reads.
            guard s.reader != nil else { return id }
            for sig in Set(signals) where !s.installed.contains(sig) {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = signalPipeHandler
                action.sa_flags = SA_RESTART
                sigemptyset(&action.sa_mask)
                _ = sigaction(sig, &action, nil)
                s.installed.insert(sig)
            }
            return id
        }
    }

    package static func unregister(_ id: Int) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }

    private static func deliver(_ sig: Int32) {
        let targets = state.withLock { s in s.handlers.values.filter { $0.signals.contains(sig) }.map(\.deliver) }
        for target in targets { target(sig) }
    }
}

/// The pipe between the signal handler and the hub's thread.
private enum SignalPipe {
    /// The write end, for the handler: -1 until the pipe exists. A global set before any handler
    /// is installed, so the handler never runs its lazy initialisation.
    static let writeEnd = Atomic<Int32>(-1)

    /// Opens the pipe once (the read end blocking, the write end not: a handler never waits).
    static func open() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        writeEnd.store(fds[1], ordering: .releasing)
        return (fds[0], fds[1])
    }

    /// Reads signal numbers for ever, handing each to `deliver`. This thread takes every signal
    /// (an empty mask): a process may start with all of them blocked — a child spawned from a
    /// libdispatch worker thread inherits its full mask — and a signal blocked in every thread
    /// would wait for ever (libdispatch's signalfd took it anyway; a handler cannot).
    static func read(_ fd: Int32, deliver: (Int32) -> Void) {
        var none = sigset_t()
        sigemptyset(&none)
        _ = pthread_sigmask(SIG_SETMASK, &none, nil)
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            for byte in buffer[..<n] { deliver(Int32(byte)) }
        }
    }
}

/// The handler every watched signal gets: its number into the pipe, errno kept.
private let signalPipeHandler: @convention(c) (Int32) -> Void = { sig in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: sig)
    let fd = SignalPipe.writeEnd.load(ordering: .acquiring)
    if fd >= 0 { _ = write(fd, &byte, 1) }
    errno = saved
}

/// A level-triggered "something happened" flag across threads: a non-blocking pipe whose read
/// end (``descriptor``) a poll loop watches. Raising it from any thread wakes the loop.
package final class EventFlag: Sendable {
    /// The read end: readable while the flag is raised.
    package let descriptor: Descriptor
    private let writeEnd: Descriptor

    package init() throws(SystemError) {
        var fds: [Int32] = [-1, -1]
        try Syscall.call("pipe") { pipe(&fds) }
        descriptor = Descriptor(adopting: fds[0], label: "wake pipe")
        writeEnd = Descriptor(adopting: fds[1], label: "wake pipe")
        for end in [descriptor, writeEnd] {
            try end.setNonBlocking()
            _ = fcntl(end.rawValue, F_SETFD, FD_CLOEXEC)
        }
    }

    /// True while the flag is raised (a look, never a wait).
    package var isRaised: Bool {
        (try? Poller.wait(for: descriptor.rawValue, events: .readable, timeout: .zero)).map { !$0.isEmpty } ?? false
    }

    /// Waits until the flag is raised (true) or `timeout` has passed (false); it stays raised.
    @discardableResult
    package func wait(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isRaised {
            let left = deadline - .now
            if left <= .zero { return false }
            _ = try? Poller.wait(for: descriptor.rawValue, events: .readable, timeout: left)
        }
        return true
    }

    /// Raises the flag. Async-signal-safe and never blocks (a full pipe is already raised).
    package func raise() {
        var one: UInt8 = 1
        _ = Glibc.write(writeEnd.rawValue, &one, 1)
    }

    /// Clears the flag; returns true if it was raised.
    @discardableResult
    package func clear() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64)
        var any = false
        while Glibc.read(descriptor.rawValue, &buffer, buffer.count) > 0 { any = true }
        return any
    }
}
