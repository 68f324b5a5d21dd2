#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CDNSSD
import SystemIO

/// What a dns_sd callback said, copied out of C memory before the callback returns.
enum Reply {
    case registered(name: String)
    case browsed(added: Bool, interface: UInt32, name: String, type: String, domain: String)
    case resolved(interface: UInt32, host: String, port: UInt16, txt: [UInt8])
    case record(added: Bool, interface: UInt32, type: UInt16, data: [UInt8])
    /// The operation failed (the callback's errorCode, or DNSServiceProcessResult's); it has
    /// already been deallocated when the handler sees this.
    case failed(code: Int32)
}

typealias OperationID = UInt64

/// The retained context handed to C: the handler of one operation. Released exactly once, after
/// its ref is deallocated (no callback can come after that).
final class CallbackContext {
    let id: OperationID
    /// Set to nil on cancel, so a callback already queued in the same ProcessResult is dropped.
    var handler: ((Reply) -> Void)?

    init(id: OperationID, handler: @escaping (Reply) -> Void) {
        self.id = id
        self.handler = handler
    }

    func deliver(_ reply: Reply) { handler?(reply) }
}

/// Something that lives on the loop thread and can be told to stop (a browser or advertiser engine).
protocol LoopClient: AnyObject {
    func stop(_ core: LoopCore)
}

/// Everything that touches dns_sd. Lives on the loop thread only and never leaves it.
final class LoopCore {
    private struct Operation {
        let ref: DNSServiceRef
        let fd: Int32
        let context: Unmanaged<CallbackContext>
        let call: String
    }

    private struct Timer {
        let id: UInt64
        let deadline: ContinuousClock.Instant
        let action: (LoopCore) -> Void
    }

    /// An operation whose dns_sd call runs on a worker (``OperationWorkers``): no ref yet.
    private struct Starting {
        let context: Unmanaged<CallbackContext>
        var cancelled = false
    }

    let inbox: LoopInbox
    /// Where resolves and record queries are made and freed; nil: on this thread (a core run
    /// inline in its caller's loop, whose inbox nobody polls).
    private let workers: OperationWorkers?
    private var operations: [OperationID: Operation] = [:]
    private var starting: [OperationID: Starting] = [:]
    private struct HostLookup {
        let fd: Int32
        let ipv6: Bool
        let timer: UInt64
        let handler: (Reply) -> Void
        var received: [UInt8] = []
    }

    /// Host lookups asked of the daemon's socket (``AvahiHostLookup``), until answered or cancelled.
    private var hostLookups: [OperationID: HostLookup] = [:]
    private var timers: [Timer] = []
    private var clients: [UInt64: any LoopClient] = [:]
    private var nextID: UInt64 = 1
    /// True inside DNSServiceProcessResult: deallocation waits until it returns.
    private var dispatching = false
    private var retired: [Operation] = []

    /// `concurrent`: make and free resolves and record queries on ``OperationWorkers`` (the
    /// loop must run ``run()``, which takes the workers' replies from the inbox).
    init(inbox: LoopInbox, concurrent: Bool = false) {
        self.inbox = inbox
        workers = concurrent ? OperationWorkers() : nil
    }

    private func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    // MARK: The loop

    func run() {
        var closed = false
        while !closed {
            let (jobs, isClosed) = inbox.take()
            for job in jobs { job(self) }
            closed = isClosed
            if closed { break }
            runDueTimers()
            let ids = Array(operations.keys)
            let lookupIDs = Array(hostLookups.keys)
            var watched: [(fd: Int32, events: Poller.Events)] = [(inbox.wake.descriptor.rawValue, .readable)]
            for id in ids { if let op = operations[id] { watched.append((op.fd, .readable)) } }
            for id in lookupIDs { if let lookup = hostLookups[id] { watched.append((lookup.fd, .readable)) } }
            let ready: [Poller.Events]
            do {
                ready = try Poller.wait(watched, until: nextTimer)
            } catch {
                // poll itself failed (not EINTR): every reply socket is suspect. Fail them all
                // rather than spin.
                for id in ids { fail(id, code: DiscoveryError.unknownCode) }
                continue
            }
            if !ready[0].isEmpty { inbox.wake.clear() }
            for (i, id) in ids.enumerated() where !ready[i + 1].isEmpty { dispatch(id, ready[i + 1]) }
            for (i, id) in lookupIDs.enumerated() where !ready[ids.count + i + 1].isEmpty { readHostLookup(id) }
        }
        shutDown()
    }

    /// Withdraws everything still registered, browsing or resolving.
    func shutDown() {
        for client in clients.values { client.stop(self) }
        clients.removeAll()
        for id in Array(operations.keys) { cancel(id) }
        for id in Array(hostLookups.keys) { cancel(id) }
        timers.removeAll()
    }

    /// The reply sockets of every open operation (for a caller that polls them itself).
    var descriptors: [Int32] { operations.values.map(\.fd) }

    /// The next timer, if any.
    var nextTimer: ContinuousClock.Instant? { timers.map(\.deadline).min() }

    /// One pass without blocking, for a caller that polls ``descriptors`` in its own loop: due
    /// timers, then every operation whose reply socket is readable (a zero-timeout poll).
    func serviceOnce() {
        runDueTimers()
        let ids = Array(operations.keys)
        guard !ids.isEmpty else { return }
        let watched: [(fd: Int32, events: Poller.Events)] = ids.compactMap { id in operations[id].map { ($0.fd, .readable) } }
        guard watched.count == ids.count, let ready = try? Poller.wait(watched, timeout: .zero) else { return }
        for (i, id) in ids.enumerated() where !ready[i].isEmpty { dispatch(id, ready[i]) }
    }

    /// Hands one readable (or hung-up) reply socket to dns_sd.
    private func dispatch(_ id: OperationID, _ events: Poller.Events) {
        guard let op = operations[id] else { return }   // cancelled by an earlier callback
        if events.contains(.readable) {
            dispatching = true
            let status = DNSServiceProcessResult(op.ref)
            dispatching = false
            if status != 0 { fail(id, code: status) }
        } else {
            // Hang-up without data: the library's end is gone. ProcessResult would report
            // "read() failed: EOF" on stderr, so do not call it.
            fail(id, code: DiscoveryError.unknownCode)
        }
        deallocateRetired()
    }

    // MARK: Clients and timers

    func adopt(_ client: any LoopClient) -> UInt64 {
        let id = makeID()
        clients[id] = client
        return id
    }

    func client(_ id: UInt64) -> (any LoopClient)? { clients[id] }

    func stopClient(_ id: UInt64) {
        guard let client = clients.removeValue(forKey: id) else { return }
        client.stop(self)
    }

    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping (LoopCore) -> Void) -> UInt64 {
        let id = makeID()
        timers.append(Timer(id: id, deadline: .now + delay, action: action))
        return id
    }

    func cancelTimer(_ id: UInt64?) {
        guard let id else { return }
        timers.removeAll { $0.id == id }
    }

    func runDueTimers() {
        let now = ContinuousClock.now
        let due = timers.filter { $0.deadline <= now }
        timers.removeAll { $0.deadline <= now }
        for t in due { t.action(self) }
    }

    // MARK: Operations

    /// Stops an operation: its handler gets nothing more; the ref is deallocated now, or right
    /// after the current DNSServiceProcessResult returns. Safe to call twice.
    func cancel(_ id: OperationID?) {
        guard let id else { return }
        if let lookup = hostLookups.removeValue(forKey: id) {
            close(lookup.fd)
            cancelTimer(lookup.timer)
            return
        }
        if var pending = starting[id] {
            pending.cancelled = true
            pending.context.takeUnretainedValue().handler = nil
            starting[id] = pending
            return
        }
        guard let op = operations.removeValue(forKey: id) else { return }
        op.context.takeUnretainedValue().handler = nil
        retired.append(op)
        if !dispatching { deallocateRetired() }
    }

    private func fail(_ id: OperationID, code: Int32) {
        guard let op = operations[id] else { return }
        let context = op.context.takeUnretainedValue()
        let handler = context.handler
        cancel(id)
        handler?(.failed(code: code))
    }

    private func deallocateRetired() {
        let done = retired
        retired.removeAll()
        for op in done {
            // A resolve or query is freed on a worker (a round trip each); a registration or
            // browse here, so that a withdrawal has happened when shutDown returns.
            if let workers, op.call == Self.resolveCall || op.call == Self.queryCall {
                let ref = UncheckedRef(op.ref), context = UncheckedContext(op.context)
                workers.submit {
                    DNSServiceRefDeallocate(ref.ref)
                    context.context.release()
                }
            } else {
                DNSServiceRefDeallocate(op.ref)      // joins the library's thread: no callback after this
                op.context.release()
            }
        }
    }

    static let resolveCall = "DNSServiceResolve"
    static let queryCall = "DNSServiceQueryRecord"

    /// Like ``start(_:handler:_:)``, with the dns_sd call on a worker when there are workers:
    /// the operation exists at once (its id may be cancelled), its ref when the call returns. A
    /// call that fails reaches the handler as ``Reply/failed(code:)``, later, not as a throw.
    private func startConcurrently(_ call: String, handler: @escaping (Reply) -> Void,
                                   _ body: @escaping @Sendable (UnsafeMutablePointer<DNSServiceRef?>, UnsafeMutableRawPointer) -> DNSServiceErrorType)
        throws(DiscoveryError) -> OperationID {
        guard let workers else { return try start(call, handler: handler, body) }
        let id = makeID()
        let context = Unmanaged.passRetained(CallbackContext(id: id, handler: { [weak self] reply in
            if case .failed = reply { self?.cancel(id) }
            handler(reply)
        }))
        starting[id] = Starting(context: context)
        let raw = UncheckedContext(context), inbox = self.inbox
        workers.submit {
            var ref: DNSServiceRef?
            let status = body(&ref, raw.context.toOpaque())
            let made = UncheckedRef(ref)
            let fd = status == 0 && ref != nil ? DNSServiceRefSockFD(ref) : -1
            let taken = inbox.post { core in core.started(id, made.ref, fd: fd, status: status, call: call) }
            if !taken {
                // The loop has shut down: nobody will process or free it but us.
                if let ref { DNSServiceRefDeallocate(ref) }
                raw.context.release()
            }
        }
        return id
    }

    /// A worker's dns_sd call has returned: the operation is processed from now on, or freed
    /// (cancelled meanwhile), or failed.
    private func started(_ id: OperationID, _ ref: DNSServiceRef?, fd: Int32, status: DNSServiceErrorType, call: String) {
        guard let pending = starting.removeValue(forKey: id) else { return }
        guard !pending.cancelled, status == 0, let ref, fd >= 0 else {
            let handler = pending.cancelled ? nil : pending.context.takeUnretainedValue().handler
            if let ref { retired.append(Operation(ref: ref, fd: fd, context: pending.context, call: call)) } else { pending.context.release() }
            if !dispatching { deallocateRetired() }
            handler?(.failed(code: status == 0 ? DiscoveryError.unknownCode : status))
            return
        }
        operations[id] = Operation(ref: ref, fd: fd, context: pending.context, call: call)
    }

    /// Creates one operation: `start` calls the dns_sd function with the context pointer.
    private func start(_ call: String, handler: @escaping (Reply) -> Void,
                       _ body: (UnsafeMutablePointer<DNSServiceRef?>, UnsafeMutableRawPointer) -> DNSServiceErrorType)
        throws(DiscoveryError) -> OperationID {
        let id = makeID()
        let context = Unmanaged.passRetained(CallbackContext(id: id, handler: { [weak self] reply in
            // A callback's error ends the operation: deallocate it before the handler reacts.
            if case .failed = reply { self?.cancel(id) }
            handler(reply)
        }))
        var ref: DNSServiceRef?
        let status = body(&ref, context.toOpaque())
        guard status == 0, let ref else {
            context.release()
            if status == DiscoveryError.unknownCode { throw .noResponder(call: call) }
            throw .failed(call: call, code: status)
        }
        let fd = DNSServiceRefSockFD(ref)
        guard fd >= 0 else {
            DNSServiceRefDeallocate(ref)
            context.release()
            throw .failed(call: "DNSServiceRefSockFD", code: DiscoveryError.unknownCode)
        }
        operations[id] = Operation(ref: ref, fd: fd, context: context, call: call)
        return id
    }

    /// DNSServiceRegister on every interface; `name` nil lets the daemon use the host name.
    /// `type` may carry one subtype as `_type._udp,_sub` (the form Avahi's compat takes).
    func register(name: String?, type: String, port: UInt16, txt: [UInt8],
                  handler: @escaping (Reply) -> Void) throws(DiscoveryError) -> OperationID {
        try start("DNSServiceRegister", handler: handler) { ref, context in
            txt.withUnsafeBytes { bytes in
                // Flags must be 0: Avahi refuses every other value (kDNSServiceErr_Unsupported).
                DNSServiceRegister(ref, 0, 0, name, type, nil, nil, port.bigEndian, UInt16(clamping: bytes.count),
                                   bytes.baseAddress, registerReply, context)
            }
        }
    }

    func browse(type: String, handler: @escaping (Reply) -> Void) throws(DiscoveryError) -> OperationID {
        try start("DNSServiceBrowse", handler: handler) { ref, context in
            DNSServiceBrowse(ref, 0, 0, type, nil, browseReply, context)
        }
    }

    func resolve(name: String, type: String, domain: String, interface: UInt32,
                 handler: @escaping (Reply) -> Void) throws(DiscoveryError) -> OperationID {
        try startConcurrently(Self.resolveCall, handler: handler) { ref, context in
            DNSServiceResolve(ref, 0, interface, name, type, domain, resolveReply, context)
        }
    }

    /// One A (`ipv6` false) or AAAA record of `host`, asked of the daemon directly
    /// (``AvahiHostLookup``), its socket polled with the operations'; nil where that cannot be
    /// (a core run inline, no such socket). The handler gets one
    /// ``Reply/record(added:interface:type:data:)``, or ``Reply/failed(code:)`` when the daemon
    /// refuses or does not answer within `timeout` (then a record query is the way). Cancel with
    /// ``cancel(_:)`` as any other.
    func lookUpHost(_ host: String, ipv6: Bool, timeout: Duration, handler: @escaping (Reply) -> Void) -> OperationID? {
        guard workers != nil, let fd = AvahiHostLookup.ask(host: host, ipv6: ipv6) else { return nil }
        let id = makeID()
        let timer = schedule(after: timeout) { core in core.finishHostLookup(id, line: nil) }
        hostLookups[id] = HostLookup(fd: fd, ipv6: ipv6, timer: timer, handler: handler)
        return id
    }

    /// Reads what the daemon sent; the first whole line (or the end) answers the lookup.
    private func readHostLookup(_ id: OperationID) {
        guard var lookup = hostLookups[id] else { return }
        var chunk = [UInt8](repeating: 0, count: 256)
        let n = chunk.withUnsafeMutableBytes { recv(lookup.fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
        if n > 0 { lookup.received += chunk[..<n] }
        if let end = lookup.received.firstIndex(of: UInt8(ascii: "\n")) {
            finishHostLookup(id, line: String(decoding: lookup.received[..<end], as: UTF8.self))
        } else if n <= 0 || lookup.received.count > 2048 {
            finishHostLookup(id, line: nil)
        } else {
            hostLookups[id] = lookup
        }
    }

    private func finishHostLookup(_ id: OperationID, line: String?) {
        guard let lookup = hostLookups.removeValue(forKey: id) else { return }
        close(lookup.fd)
        cancelTimer(lookup.timer)
        if let line, let answer = AvahiHostLookup.parse(line, ipv6: lookup.ipv6) {
            lookup.handler(.record(added: true, interface: answer.interface, type: answer.type, data: answer.address))
        } else {
            lookup.handler(.failed(code: DiscoveryError.unknownCode))
        }
    }

    /// A (1) or AAAA (28) records of `host` on one interface; stays open and reports additions
    /// and removals. Avahi's compat has no DNSServiceGetAddrInfo: this is the way to addresses.
    func queryRecord(host: String, type: UInt16, interface: UInt32,
                     handler: @escaping (Reply) -> Void) throws(DiscoveryError) -> OperationID {
        try startConcurrently(Self.queryCall, handler: handler) { ref, context in
            DNSServiceQueryRecord(ref, 0, interface, host, type, UInt16(kDNSServiceClass_IN), recordReply, context)
        }
    }
}

/// A ref or context handed between the loop thread and a worker: each side touches it only
/// while the other does not (see ``LoopCore/startConcurrently(_:handler:_:)``).
private struct UncheckedRef: @unchecked Sendable {
    let ref: DNSServiceRef?
    init(_ ref: DNSServiceRef?) { self.ref = ref }
}

private struct UncheckedContext: @unchecked Sendable {
    let context: Unmanaged<CallbackContext>
    init(_ context: Unmanaged<CallbackContext>) { self.context = context }
}

// MARK: - C callbacks (file scope, no captures: they reach Swift through the context)

private func context(_ raw: UnsafeMutableRawPointer?) -> CallbackContext? {
    guard let raw else { return nil }
    return Unmanaged<CallbackContext>.fromOpaque(raw).takeUnretainedValue()
}

private func text(_ p: UnsafePointer<CChar>?) -> String {
    guard let p else { return "" }
    return String(cString: p)
}

private func registerReply(_ ref: DNSServiceRef?, _ flags: DNSServiceFlags, _ error: DNSServiceErrorType,
                           _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?,
                           _ domain: UnsafePointer<CChar>?, _ raw: UnsafeMutableRawPointer?) {
    guard let ctx = context(raw) else { return }
    ctx.deliver(error == 0 ? .registered(name: text(name)) : .failed(code: error))
}

private func browseReply(_ ref: DNSServiceRef?, _ flags: DNSServiceFlags, _ interface: UInt32,
                         _ error: DNSServiceErrorType, _ name: UnsafePointer<CChar>?,
                         _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?,
                         _ raw: UnsafeMutableRawPointer?) {
    guard let ctx = context(raw) else { return }
    guard error == 0 else { ctx.deliver(.failed(code: error)); return }
    ctx.deliver(.browsed(added: flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0, interface: interface,
                         name: text(name), type: text(type), domain: text(domain)))
}

private func resolveReply(_ ref: DNSServiceRef?, _ flags: DNSServiceFlags, _ interface: UInt32,
                          _ error: DNSServiceErrorType, _ fullName: UnsafePointer<CChar>?,
                          _ host: UnsafePointer<CChar>?, _ port: UInt16, _ txtLength: UInt16,
                          _ txt: UnsafePointer<UInt8>?, _ raw: UnsafeMutableRawPointer?) {
    guard let ctx = context(raw) else { return }
    guard error == 0 else { ctx.deliver(.failed(code: error)); return }
    let bytes = txt.map { Array(UnsafeBufferPointer(start: $0, count: Int(txtLength))) } ?? []
    ctx.deliver(.resolved(interface: interface, host: text(host), port: UInt16(bigEndian: port), txt: bytes))
}

private func recordReply(_ ref: DNSServiceRef?, _ flags: DNSServiceFlags, _ interface: UInt32,
                         _ error: DNSServiceErrorType, _ fullName: UnsafePointer<CChar>?,
                         _ type: UInt16, _ rrclass: UInt16, _ length: UInt16, _ data: UnsafeRawPointer?,
                         _ ttl: UInt32, _ raw: UnsafeMutableRawPointer?) {
    guard let ctx = context(raw) else { return }
    guard error == 0 else { ctx.deliver(.failed(code: error)); return }
    let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
    ctx.deliver(.record(added: flags & DNSServiceFlags(kDNSServiceFlagsAdd) != 0, interface: interface,
                        type: type, data: bytes))
}
