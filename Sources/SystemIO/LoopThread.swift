#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A loop's own thread, the lifecycle the long-lived loops share: started at most once, and
/// known to have ended (its body returned), so its owner can ask it to stop (through its
/// ``LoopRunner``: a mailbox message or `requestStop`) and wait a bounded time for it.
///
/// Contract: ``start(_:)`` runs the body on a new thread the first time and does nothing after;
/// ``wait(timeout:)`` returns at once when the thread never started (there is nothing to wait
/// for) and otherwise when the body has returned, or false when `timeout` passed first.
package final class LoopThread: Sendable {
    private let name: String
    private let stackSize: Int?
    private let started = Atomic<Bool>(false)
    private let ended: EventFlag

    /// `name`: the thread's name as `top -H` shows it (cut to 15 bytes); `stackSize` in bytes
    /// (nil: the system's default).
    package convenience init(name: String, stackSize: Int? = nil) throws(SystemError) {
        // Trap: the throwing call stays out of the designated init. Swift 6.3.1's optimiser
        // crashes (ownership verifier, CopyPropagation) on the clean-up of an Atomic when a
        // designated init inlined into its caller throws after it was set up.
        let ended = try EventFlag()
        self.init(name: name, stackSize: stackSize, ended: ended)
    }

    private init(name: String, stackSize: Int?, ended: EventFlag) {
        self.name = name
        self.stackSize = stackSize
        self.ended = ended
    }

    /// Runs `body` on a new thread the first time; true if this call started it. A thread the
    /// system refuses to create ends at once (``hasEnded``), as if its body had returned.
    @discardableResult
    package func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        let box = Unmanaged.passRetained(Start(name: name, body: body, ended: ended))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN))) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        if pthread_create(&thread, &attributes, loopThreadMain, box.toOpaque()) != 0 {
            box.release()
            ended.raise()
        }
        return true
    }

    package var hasStarted: Bool { started.load(ordering: .acquiring) }

    /// True once the body has returned.
    package var hasEnded: Bool { ended.isRaised }

    /// Waits until the body has returned (true) or `timeout` passed (false); true at once when
    /// the thread was never started.
    @discardableResult
    package func wait(timeout: Duration) -> Bool {
        guard hasStarted else { return true }
        return ended.wait(timeout: timeout)
    }

    /// What the new thread is handed.
    fileprivate final class Start {
        let name: String
        let body: @Sendable () -> Void
        let ended: EventFlag

        init(name: String, body: @escaping @Sendable () -> Void, ended: EventFlag) {
            self.name = name
            self.body = body
            self.ended = ended
        }
    }
}

/// The thread's entry point: names the thread, runs the body, raises the flag.
private func loopThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let argument else { return nil }
    let start = Unmanaged<LoopThread.Start>.fromOpaque(argument).takeRetainedValue()
    nameThisThread(start.name)
    start.body()
    start.ended.raise()
    return nil
}

/// Names the calling thread (its `comm`, 15 bytes at most) through /proc: Glibc's module does not
/// export pthread_setname_np (a GNU extension). Best effort: a name is for `top -H` and `ps -L`.
private func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    defer { close(fd) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
