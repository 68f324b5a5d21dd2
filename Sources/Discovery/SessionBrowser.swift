import SystemIO

/// Browses one session's receivers and reports them as ``BrowserEvent``s: each instance of
/// interest is resolved (SRV + TXT) and its host's A and AAAA records are looked up on the
/// interface it was found on.
///
/// Queries that do not grow with the class (Protocol.md §6.4): one browse per session; only the
/// instances `interest` accepts are resolved (a controller with `--receiver` resolves its own
/// receiver and nothing else); and with ``Lookups/once`` the resolve and the address lookups of
/// an instance are stopped as soon as it is resolved (SRV, TXT and both A and AAAA answered, or
/// ``addressLinger`` after the first address). The browse stays open, so a goodbye still
/// reports the instance lost and a new registration makes it found (and resolved) again;
/// ``refresh(instance:)`` resolves one again when its address stopped answering.
/// ``Lookups/open`` keeps every lookup open instead, so a changed address or port is reported
/// as it happens (`browse`, which shows changes live).
///
/// The handler runs on the loop thread (see ``DNSServiceLoop``); an ``EventMailbox`` hands the
/// events to a poll loop. When the responder dies mid-session the browser reports
/// ``BrowserEvent/responderLost(retryIn:)``, deallocates everything and retries with back-off
/// (1, 2, 4 … 30 s) until ``BrowserEvent/responderBack``.
package final class SessionBrowser: Sendable {
    /// How long an instance's lookups stay open.
    package enum Lookups: Sendable {
        /// Until it is resolved (then only the browse listens).
        case once
        /// While it is there.
        case open
    }

    package let session: SessionID
    private let loop: DNSServiceLoop
    private let clientID: UInt64

    /// Starts browsing. Throws ``DiscoveryError/noResponder(call:)`` at once when no mDNS
    /// responder is reachable. `interest` says which instance names to resolve (every one by
    /// default); instances it refuses are still reported ``BrowserEvent/found(_:)`` and
    /// ``BrowserEvent/lost(_:)``, never resolved. `role` picks the service type browsed
    /// (receivers by default).
    package init(session: SessionID, role: ServiceRole = .receiver, lookups: Lookups = .open, loop: DNSServiceLoop? = nil,
                interest: @escaping @Sendable (String) -> Bool = { _ in true },
                onEvent: @escaping @Sendable (BrowserEvent) -> Void) throws(DiscoveryError) {
        let loop = try DNSServiceLoop.given(loop)
        self.session = session
        self.loop = loop
        let type = session.browseType(role)
        clientID = try loop.perform("DNSServiceBrowse") { (core) throws(DiscoveryError) -> UInt64 in
            let engine = BrowseEngine(type: type, lookups: lookups, interest: interest, emit: onEvent)
            try engine.start(core)
            return core.adopt(engine)
        }
    }

    /// Resolves `instance` again (its address stopped answering): its SRV, TXT and addresses are
    /// reported afresh where they changed. Returns at once; may be called from a handler.
    package func refresh(instance: String) {
        let id = clientID
        loop.post { core in (core.client(id) as? BrowseEngine)?.refresh(instance, core) }
    }

    deinit { stop() }

    /// Stops browsing and deallocates every operation. Idempotent; may be called from a handler.
    package func stop() {
        loop.stop(client: clientID)
    }
}

/// The browser's state, on the loop thread only.
final class BrowseEngine: LoopClient {
    final class Instance {
        var found = 0                  // browse adds minus removes (one per IPv4/IPv6 protocol)
        var reportedFound = false      // .found emitted (by the browse, or by a direct resolve)
        var type = SessionID.serviceType + "."
        var domain = "local."
        var resolveOp: OperationID?
        var resolved: (host: String, port: UInt16, txt: [UInt8])?
        var queries: [OperationID] = []
        var records: [UInt16: [[UInt8]]] = [:]   // rrtype → rdata, in arrival order
        var reported: [SocketAddress]?
        var retryTimer: UInt64?
        var settleTimer: UInt64?
        var lingerTimer: UInt64?
    }

    private let type: String
    private let lookups: SessionBrowser.Lookups
    private let interest: @Sendable (String) -> Bool
    let emit: @Sendable (BrowserEvent) -> Void
    private var browseOp: OperationID?
    var instances: [ServiceKey: Instance] = [:]
    private var backoff = Backoff()
    private(set) var retryTimer: UInt64?
    private(set) var stopped = false
    /// With a known instance (``DirectResolve``): its resolve, the watch on its SRV record, the
    /// rename probe and the fallback browse (BrowseEngine+Direct.swift).
    let direct: DirectResolve?
    var directOp: OperationID?
    var directTimer: UInt64?
    var watches: [ServiceKey: (op: OperationID, records: Int)] = [:]
    var watchTimers: [ServiceKey: UInt64] = [:]
    var probeOp: OperationID?
    var probeTimer: UInt64?
    var browseTimer: UInt64?

    /// How long to wait before resolving again after a resolve or lookup failed on its own (a
    /// timeout maps to the same -65537 as a dead daemon in Avahi's compat layer).
    static let operationRetry: Duration = .seconds(1)
    /// The first address set of an instance waits until both A and AAAA have answered, or this
    /// long after the first answer: otherwise a link-local AAAA arriving 1 ms before the A
    /// record would be reported (and followed) first, then replaced.
    static let addressSettle: Duration = .milliseconds(100)
    /// With ``SessionBrowser/Lookups/once``: how long the address lookups stay open after the
    /// first address set was reported when one family never answers (a host without IPv6).
    static let addressLinger: Duration = .seconds(1)
    /// How long the daemon may take to answer a host lookup from its socket before the record
    /// query is asked instead (it answers from its cache at once when it has the address).
    static let hostLookupTimeout: Duration = .milliseconds(500)

    init(type: String, lookups: SessionBrowser.Lookups, interest: @escaping @Sendable (String) -> Bool,
         direct: DirectResolve? = nil, emit: @escaping @Sendable (BrowserEvent) -> Void) {
        self.type = type
        self.lookups = lookups
        self.interest = interest
        self.direct = direct
        self.emit = emit
    }

    /// Resolves an instance again from scratch (its address stopped answering).
    func refresh(_ name: String, _ core: LoopCore) {
        var known = false
        for (key, instance) in instances where key.name == name {
            known = true
            guard instance.retryTimer == nil else { continue }
            stopLookups(instance, core)
            instance.resolved = nil
            instance.records = [:]
            resolve(key, core)
        }
        if !known, let direct, direct.instance == name, directOp == nil, directTimer == nil {
            resolveDirectly(direct.instance, core)
        }
    }

    /// Cancels an instance's resolve and address lookups (its last report stands).
    private func stopLookups(_ instance: Instance, _ core: LoopCore) {
        core.cancel(instance.resolveOp)
        instance.resolveOp = nil
        for q in instance.queries { core.cancel(q) }
        instance.queries = []
        core.cancelTimer(instance.settleTimer)
        instance.settleTimer = nil
        core.cancelTimer(instance.lingerTimer)
        instance.lingerTimer = nil
    }

    /// With ``SessionBrowser/Lookups/once``: the instance is resolved once SRV, TXT and an
    /// address set were reported and both A and AAAA answered; or ``addressLinger`` after the
    /// first address set when one family stays silent.
    private func doneIfResolved(_ key: ServiceKey, _ core: LoopCore) {
        guard lookups == .once, let instance = instances[key], instance.resolved != nil, instance.reported != nil else { return }
        if instance.records.count >= 2 {
            stopLookups(instance, core)
        } else if instance.lingerTimer == nil {
            instance.lingerTimer = core.schedule(after: Self.addressLinger) { [weak self] core in
                guard let self, let instance = self.instances[key] else { return }
                instance.lingerTimer = nil
                if instance.reported != nil { self.stopLookups(instance, core) }
            }
        }
    }

    /// Starts discovery: the browse at once, or — with a ``DirectResolve`` — the known instance
    /// (``startDirect(_:_:)``).
    func start(_ core: LoopCore) throws(DiscoveryError) {
        if let direct { try startDirect(direct, core) } else { try startBrowse(core) }
    }

    var browsing: Bool { browseOp != nil }

    func startBrowse(_ core: LoopCore) throws(DiscoveryError) {
        browseOp = try core.browse(type: type) { [weak self, unowned core] reply in
            self?.browsed(reply, core)
        }
    }

    func stop(_ core: LoopCore) {
        stopped = true
        core.cancelTimer(retryTimer)
        stopDirect(core)
        core.cancel(browseOp)
        browseOp = nil
        for key in Array(instances.keys) { forget(key, core) }
    }

    private func browsed(_ reply: Reply, _ core: LoopCore) {
        switch reply {
        case .browsed(let added, let interface, let name, let type, let domain):
            let key = ServiceKey(name: name, interface: interface)
            if added {
                let instance = instances[key] ?? Instance()
                instance.found += 1
                instance.type = type
                instance.domain = domain
                instances[key] = instance
                if !instance.reportedFound {
                    instance.reportedFound = true
                    emit(.found(key))
                    if interest(name) { resolve(key, core) }
                }
            } else if let instance = instances[key] {
                instance.found -= 1
                if instance.found <= 0 {
                    forget(key, core)
                    emit(.lost(key))
                }
            }
        case .failed:
            responderLost(core)
        default:
            break
        }
    }

    func resolve(_ key: ServiceKey, _ core: LoopCore) {
        guard let instance = instances[key] else { return }
        do {
            instance.resolveOp = try core.resolve(name: key.name, type: instance.type, domain: instance.domain,
                                                  interface: key.interface) { [weak self, unowned core] reply in
                self?.resolved(key, reply, core)
            }
        } catch .noResponder {
            responderLost(core)
        } catch {
            retryLater(key, core)
        }
    }

    func resolved(_ key: ServiceKey, _ reply: Reply, _ core: LoopCore) {
        guard let instance = instances[key] else { return }
        switch reply {
        case .resolved(_, let host, let port, let txt):
            let previous = instance.resolved
            instance.resolved = (host, port, txt)
            if previous?.host != host || previous?.port != port || previous?.txt != txt {
                emit(.resolved(key, host: host, port: port, txt: txt))
            }
            if previous?.host != host {
                for q in instance.queries { core.cancel(q) }
                instance.queries = []
                instance.records = [:]
                instance.reported = nil
                lookUp(key, host: host, core)
            } else if instance.reported != nil {
                reportAddresses(key, core)   // same host, maybe a new port
            }
        case .failed:
            instance.resolveOp = nil
            retryLater(key, core)
        default:
            break
        }
    }

    private func lookUp(_ key: ServiceKey, host: String, _ core: LoopCore) {
        guard let instance = instances[key] else { return }
        for rrtype: UInt16 in [1, 28] {       // A, AAAA
            // Once: first ask the daemon directly (one round trip, from its cache); the record
            // query (a D-Bus connection of its own) only if that gets no answer.
            // An answer from another interface than the instance's is not taken (its address
            // may not be reachable here, and a link-local one would get the wrong scope).
            if lookups == .once, let op = core.lookUpHost(host, ipv6: rrtype == 28, timeout: Self.hostLookupTimeout, handler: { [weak self, unowned core] reply in
                guard let self, self.instances[key] != nil else { return }
                if case .record(_, let interface, _, _) = reply, interface == key.interface || key.interface == 0 {
                    self.recorded(key, rrtype, reply, core)
                } else {
                    self.queryRecords(key, host: host, rrtype, core)
                }
            }) {
                instance.queries.append(op)
                continue
            }
            queryRecords(key, host: host, rrtype, core)
        }
    }

    private func queryRecords(_ key: ServiceKey, host: String, _ rrtype: UInt16, _ core: LoopCore) {
        guard let instance = instances[key] else { return }
        do {
            let op = try core.queryRecord(host: host, type: rrtype, interface: key.interface) { [weak self, unowned core] reply in
                self?.recorded(key, rrtype, reply, core)
            }
            instance.queries.append(op)
        } catch .noResponder {
            responderLost(core)
        } catch {
            retryLater(key, core)
        }
    }

    private func recorded(_ key: ServiceKey, _ rrtype: UInt16, _ reply: Reply, _ core: LoopCore) {
        guard let instance = instances[key] else { return }
        switch reply {
        case .record(let added, _, let type, let data):
            guard type == rrtype, data.count == (type == 1 ? 4 : 16) else { return }
            var list = instance.records[type] ?? []
            if added {
                if !list.contains(data) { list.append(data) }
            } else {
                list.removeAll { $0 == data }
            }
            instance.records[type] = list
            if instance.reported == nil && instance.records.count < 2 {
                if instance.settleTimer == nil {
                    instance.settleTimer = core.schedule(after: Self.addressSettle) { [weak self] core in
                        guard let self, let instance = self.instances[key] else { return }
                        instance.settleTimer = nil
                        self.reportAddresses(key, core)
                    }
                }
                return
            }
            core.cancelTimer(instance.settleTimer)
            instance.settleTimer = nil
            reportAddresses(key, core)
        case .failed:
            retryLater(key, core)
        default:
            break
        }
    }

    private func reportAddresses(_ key: ServiceKey, _ core: LoopCore) {
        guard let instance = instances[key], let port = instance.resolved?.port else { return }
        let raw = (instance.records[1] ?? []) + (instance.records[28] ?? [])
        let addresses = raw.compactMap { SocketAddress(addressBytes: $0, port: port, scopeID: key.interface) }
        if addresses != instance.reported {
            instance.reported = addresses
            emit(.addresses(key, addresses))
        }
        doneIfResolved(key, core)
    }

    /// A resolve or lookup failed on its own: start the instance's operations again shortly.
    private func retryLater(_ key: ServiceKey, _ core: LoopCore) {
        guard let instance = instances[key], instance.retryTimer == nil else { return }
        core.cancel(instance.resolveOp)
        instance.resolveOp = nil
        for q in instance.queries { core.cancel(q) }
        instance.queries = []
        instance.retryTimer = core.schedule(after: Self.operationRetry) { [weak self] core in
            guard let self, let instance = self.instances[key] else { return }
            instance.retryTimer = nil
            instance.resolved = nil          // so the next resolve restarts the lookups
            instance.records = [:]
            instance.reported = nil
            self.resolve(key, core)
        }
    }

    func forget(_ key: ServiceKey, _ core: LoopCore) {
        guard let instance = instances.removeValue(forKey: key) else { return }
        stopLookups(instance, core)
        core.cancelTimer(instance.retryTimer)
    }

    /// The responder went away: drop everything, say so, try again later.
    func responderLost(_ core: LoopCore) {
        guard !stopped, retryTimer == nil else { return }
        core.cancel(browseOp)
        browseOp = nil
        stopDirect(core)
        for key in Array(instances.keys) { forget(key, core) }
        let delay = backoff.nextDelay()
        emit(.responderLost(retryIn: delay))
        scheduleRetry(after: delay, core)
    }

    private func scheduleRetry(after delay: Duration, _ core: LoopCore) {
        retryTimer = core.schedule(after: delay) { [weak self] core in
            guard let self, !self.stopped else { return }
            self.retryTimer = nil
            do {
                try self.start(core)
                self.backoff.reset()
                self.emit(.responderBack)
            } catch {
                self.scheduleRetry(after: self.backoff.nextDelay(), core)
            }
        }
    }
}
