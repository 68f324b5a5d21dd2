#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Synchronization

/// Turns SIGINT/SIGTERM (and optionally SIGHUP) into something a poll loop can wait on: a
/// descriptor that becomes readable, and the signal number that arrived first.
///
/// Contract: once a signal has been watched in this process its default action (terminate) is
/// gone for good, so the process must react to ``readableDescriptor`` — write the safe state,
/// then exit with ``exitCode``. Dispatch delivers the signal whatever thread it hit; any number
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

/// One dispatch signal source per signal for the whole process, fanning each signal out to
/// every registered watcher.
///
/// Traps this exists for: libdispatch catches a signal with a handler it installs itself, and
/// only some time after `resume()`, on its own queue; setting SIG_IGN again (as a second
/// watcher naively would) replaces that handler and silences every watcher of the signal, and a
/// signal that arrives before the handler is in place is ignored and lost. So each signal gets
/// one source, created once, and registering waits until its handler is installed.
package enum SignalHub {
    private struct State {
        var next = 0
        var handlers: [Int: (signals: Set<Int32>, deliver: @Sendable (Int32) -> Void)] = [:]
        var sources: [Int32: any DispatchSourceSignal] = [:]
    }

    private static let state = Mutex(State())
    private static let queue = DispatchQueue(label: "analog-remote.signals")

    /// Calls `handler` (on a dispatch queue) for every one of `signals` that arrives, from the
    /// moment this returns; returns a token for ``unregister(_:)``.
    package static func register(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) -> Int {
        let (id, fresh) = state.withLock { s -> (Int, [Int32]) in
            let id = s.next
            s.next += 1
            s.handlers[id] = (Set(signals), handler)
            var fresh: [Int32] = []
            for sig in Set(signals) where s.sources[sig] == nil {
                _ = Glibc.signal(sig, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
                source.setEventHandler { deliver(sig) }
                source.resume()
                s.sources[sig] = source
                fresh.append(sig)
            }
            return (id, fresh)
        }
        let deadline = ContinuousClock.now + .seconds(2)
        for sig in fresh {
            var current = sigaction()
            while ContinuousClock.now < deadline {
                _ = sigaction(sig, nil, &current)
                if unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
                    != unsafeBitCast(SIG_IGN, to: Int.self) { break }
                usleep(100)
            }
        }
        return id
    }

    package static func unregister(_ id: Int) {
        _ = state.withLock { $0.handlers.removeValue(forKey: id) }
    }

    private static func deliver(_ sig: Int32) {
        let targets = state.withLock { s in s.handlers.values.filter { $0.signals.contains(sig) }.map(\.deliver) }
        for target in targets { target(sig) }
    }
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
