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
/// Contract: while a watcher is alive the default action (terminate) is replaced, so the
/// process must react to ``readableDescriptor`` — write the safe state, then exit with
/// ``exitCode``. Dispatch delivers the signal whatever thread it hit.
public final class SignalWatcher: Sendable {
    private let wake: EventFlag
    /// Kept only to keep the sources alive; written once in init, never touched again.
    nonisolated(unsafe) private let sources: [any DispatchSourceSignal]
    private let caught = CaughtSignal()

    private final class CaughtSignal: Sendable {
        let value = Atomic<Int32>(0)
    }

    public init(signals: [Int32] = [SIGINT, SIGTERM]) throws(SystemError) {
        let wake = try EventFlag()
        self.wake = wake
        let queue = DispatchQueue(label: "analog-remote.signals")
        var made: [any DispatchSourceSignal] = []
        for sig in signals {
            _ = Glibc.signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [caught] in
                _ = caught.value.compareExchange(expected: 0, desired: sig, ordering: .acquiringAndReleasing)
                wake.raise()
            }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    /// Readable once a signal has arrived.
    public var readableDescriptor: Int32 { wake.descriptor.rawValue }
    /// The first signal caught, or nil.
    public var signal: Int32? { let s = caught.value.load(ordering: .acquiring); return s == 0 ? nil : s }
    /// The conventional exit status for the caught signal: 128 + number (130 SIGINT, 143 SIGTERM).
    public var exitCode: Int32 { 128 + (signal ?? 0) }
    /// Blocks until a signal arrives (for tools with nothing else to wait on).
    public func wait() { while signal == nil { _ = try? Poller.wait(for: readableDescriptor, events: .readable, timeout: nil) } }
}

/// A level-triggered "something happened" flag across threads: a non-blocking pipe whose read
/// end (``descriptor``) a poll loop watches. Raising it from any thread wakes the loop.
public final class EventFlag: Sendable {
    /// The read end: readable while the flag is raised.
    public let descriptor: Descriptor
    private let writeEnd: Descriptor

    public init() throws(SystemError) {
        var fds: [Int32] = [-1, -1]
        try Syscall.call("pipe") { pipe(&fds) }
        descriptor = Descriptor(adopting: fds[0], label: "wake pipe")
        writeEnd = Descriptor(adopting: fds[1], label: "wake pipe")
        for end in [descriptor, writeEnd] {
            try end.setNonBlocking()
            _ = fcntl(end.rawValue, F_SETFD, FD_CLOEXEC)
        }
    }

    /// Raises the flag. Async-signal-safe and never blocks (a full pipe is already raised).
    public func raise() {
        var one: UInt8 = 1
        _ = Glibc.write(writeEnd.rawValue, &one, 1)
    }

    /// Clears the flag; returns true if it was raised.
    @discardableResult
    public func clear() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64)
        var any = false
        while Glibc.read(descriptor.rawValue, &buffer, buffer.count) > 0 { any = true }
        return any
    }
}
