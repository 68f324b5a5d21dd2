#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Synchronization
import SystemIO

/// The one thread that talks to dns_sd for a set of operations.
///
/// Contract: every `DNSServiceRef` is processed on this thread only (inside ``LoopCore``), and
/// registrations and browses are made and freed here too. Resolves and record queries are made
/// and freed on ``OperationWorkers`` (each costs D-Bus round trips in Avahi's compat layer, and
/// a class's worth of them in a row would delay the last receiver), but a ref is touched by one
/// thread at a time: the worker until it hands it over, this thread until it hands it back
/// to be freed, and no callback runs outside DNSServiceProcessResult here. The thread sleeps in poll(2) on the
/// refs' reply sockets (`DNSServiceRefSockFD`), a wake pipe, and the next timer: no busy polling.
/// Other threads hand it work with ``perform(_:_:)`` (waits for the result) or ``post(_:)``.
/// Handlers of discovery events run on this thread: keep them short, and never call a blocking
/// method of a browser or advertiser from inside one (it throws ``DiscoveryError/calledFromHandler(call:)``).
package final class DNSServiceLoop: Sendable {
    let inbox: LoopInbox

    /// Starts the thread. Sets `AVAHI_COMPAT_NOWARN=1` first, which silences the compat layer's
    /// three-line warning (it reads the variable at its first call).
    package init() throws(DiscoveryError) {
        Self.silenceCompatWarning()
        let wake: EventFlag
        do { wake = try EventFlag() } catch { throw .system(error) }
        inbox = LoopInbox(wake: wake)
        let core = LoopCore(inbox: inbox, concurrent: true)
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, loopThreadMain, Unmanaged.passRetained(core).toOpaque())
        guard rc == 0 else {
            // The thread never ran: take back the reference handed to it.
            Unmanaged.passUnretained(core).release()
            throw .system(SystemError(call: "pthread_create", errno: rc, subject: "dns-sd loop"))
        }
        inbox.thread.store(UInt(thread), ordering: .releasing)
    }

    deinit {
        shutdown()
    }

    /// The process-wide loop, started on first use.
    package static func shared() throws(DiscoveryError) -> DNSServiceLoop {
        try sharedLoop.withLock { (slot) throws(DiscoveryError) -> DNSServiceLoop in
            if let loop = slot { return loop }
            let loop = try DNSServiceLoop()
            slot = loop
            return loop
        }
    }

    /// `loop`, or the shared loop when nil.
    static func given(_ loop: DNSServiceLoop?) throws(DiscoveryError) -> DNSServiceLoop {
        if let loop { return loop }
        return try shared()
    }

    /// Stops the thread after deallocating every ref it still owns (withdrawing registrations)
    /// and waits for it, unless called on the loop thread itself. Idempotent.
    package func shutdown() {
        let onLoop = inbox.isLoopThread
        guard inbox.close() else { return }
        let thread = pthread_t(inbox.thread.load(ordering: .acquiring))
        // On the loop thread (a handler dropped the last reference) it cannot wait for itself.
        if onLoop { pthread_detach(thread) } else { pthread_join(thread, nil) }
    }

    /// True on the loop thread (inside a handler).
    package var isLoopThread: Bool { inbox.isLoopThread }

    /// Runs `body` on the loop thread and returns its result; blocks the caller until then.
    func perform<T: Sendable>(_ call: String,
                              _ body: @escaping @Sendable (LoopCore) throws(DiscoveryError) -> T) throws(DiscoveryError) -> T {
        guard !inbox.isLoopThread else { throw .calledFromHandler(call: call) }
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        let posted = inbox.post { core in
            box.result.withLock { $0 = Result { () throws(DiscoveryError) -> T in try body(core) } }
            done.signal()
        }
        guard posted else { throw .failed(call: call, code: DiscoveryError.unknownCode) }
        done.wait()
        guard let result = box.result.withLock({ $0 }) else { throw .failed(call: call, code: DiscoveryError.unknownCode) }
        return try result.get()
    }

    /// Stops a client (an advertiser's or a browser's engine) and deallocates its operations.
    /// From a handler on the loop thread it is queued to run after that handler; from any other
    /// thread it returns once done. Idempotent.
    func stop(client id: UInt64) {
        if isLoopThread {
            _ = post { $0.stopClient(id) }
        } else {
            _ = try? perform("stop") { core in core.stopClient(id) }
        }
    }

    /// Runs `body` on the loop thread later; false if the loop has stopped.
    @discardableResult
    func post(_ body: @escaping @Sendable (LoopCore) -> Void) -> Bool {
        inbox.post(body)
    }

    static func silenceCompatWarning() {
        warningSilenced.withLock { done in
            guard !done else { return }
            setenv("AVAHI_COMPAT_NOWARN", "1", 1)
            done = true
        }
    }
}

private let sharedLoop = Mutex<DNSServiceLoop?>(nil)
private let warningSilenced = Mutex<Bool>(false)

private final class ResultBox<T: Sendable>: Sendable {
    let result = Mutex<Result<T, DiscoveryError>?>(nil)
}

/// The only state shared between the loop thread and the rest: queued jobs and a wake pipe.
final class LoopInbox: Sendable {
    typealias Job = @Sendable (LoopCore) -> Void
    let wake: EventFlag
    /// The loop thread's pthread_t (0 until it is known).
    let thread = Atomic<UInt>(0)
    private let state = Mutex<(jobs: [Job], closed: Bool)>(([], false))

    init(wake: EventFlag) { self.wake = wake }

    var isLoopThread: Bool { thread.load(ordering: .acquiring) == UInt(pthread_self()) }

    func post(_ job: @escaping Job) -> Bool {
        let accepted = state.withLock { s -> Bool in
            if s.closed { return false }
            s.jobs.append(job)
            return true
        }
        if accepted { wake.raise() }
        return accepted
    }

    func take() -> (jobs: [Job], closed: Bool) {
        state.withLock { s in
            let out = (s.jobs, s.closed)
            s.jobs.removeAll()
            return out
        }
    }

    /// Asks the loop to stop; true the first time.
    @discardableResult
    func close() -> Bool {
        let first = state.withLock { s -> Bool in
            if s.closed { return false }
            s.closed = true
            return true
        }
        if first { wake.raise() }
        return first
    }
}

/// The thread's entry point: takes over the core handed to pthread_create and runs it.
private func loopThreadMain(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let argument else { return nil }
    let core = Unmanaged<LoopCore>.fromOpaque(argument).takeRetainedValue()
    core.run()
    return nil
}
