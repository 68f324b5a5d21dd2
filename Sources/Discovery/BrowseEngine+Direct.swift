/// A controller that knows its receiver (`--receiver NAME`) does not browse the session
/// (Protocol.md §6.4, "A known receiver"). Measured on a simulated classroom of 73 hosts: a
/// browse first delivers every receiver of the session, one D-Bus signal each (30 of them, 0.1–
/// 0.5 s apart on a busy machine, so the last driver waited 15 s for its own robot), and each
/// browse query carries the whole session as known answers, which every host's responder parses
/// (a 1 KB packet, 30 records; 36 drivers' back-off repeats of them took most of two cores).
///
/// Instead:
/// - **resolve** the known instance at once (SRV, TXT, then A/AAAA as for any instance); the
///   local responder usually answers from its cache, filled by the receivers' announcements;
/// - **watch** its SRV record afterwards: one small query whose answer is the record itself, so a
///   goodbye still reports the instance lost, and a registration again reports it found. The
///   watch starts at a random moment 2–14 s after the resolve, so that a class resolved in the
///   same second does not repeat its watch queries (1, 2, 4, 8 … s apart) in the same second:
///   36 drivers aligned sent 72 packets (a query per IP family) in one second, and spread over
///   4 s still 56. Until the watch starts, a receiver that left is found by the link check (it
///   stops answering for 2 s);
/// - **probe** for a rename of the wanted name (`NAME [mark] #2`) for a few seconds at start, so
///   a driver whose receiver was renamed in its session is told (§6.1);
/// - **browse** only when the known instance has not answered by ``DirectResolve/browseAfter``
///   (a typo, a receiver announced by hand, a rename past #2): then the session's listing helps.
struct DirectResolve: Sendable {
    /// The instance name to resolve (``InstanceName/forWanted(_:in:)``).
    var instance: String
    /// When to start the browse if the instance has not been resolved by then.
    var browseAfter: Duration
    /// The rename to look for (nil when the wanted name already is one).
    var renameProbe: String?

    /// How long the rename probe runs.
    static let probeWindow: Duration = .seconds(3)

    /// The fallback browse starts at a random moment in this window (seconds), so that drivers
    /// started together do not send their first browse queries, nor the back-off repeats of them
    /// (1, 2, 4, 8 … s later), in the same second.
    static let browseWindow: ClosedRange<Double> = 2.0...6.0

    /// The watch on the resolved instance starts at a random moment in this window (seconds).
    static let watchWindow: ClosedRange<Double> = 2.0...14.0

    static func randomDelay<R: RandomNumberGenerator>(in window: ClosedRange<Double>, using rng: inout R) -> Duration {
        .milliseconds(Int64((Double.random(in: window, using: &rng) * 1000).rounded()))
    }

    static func randomDelay(in window: ClosedRange<Double>) -> Duration {
        var rng = SystemRandomNumberGenerator()
        return randomDelay(in: window, using: &rng)
    }
}

/// The DNS name of a service instance for a record query: the instance label with `.` and `\`
/// escaped (RFC 6763 §4.3), then the type and domain.
enum ServiceInstanceName {
    static func full(_ instance: String, type: String = SessionID.serviceType, domain: String = "local") -> String {
        var label = ""
        for ch in instance {
            if ch == "." || ch == "\\" { label.append("\\") }
            label.append(ch)
        }
        return label + "." + type + "." + domain + "."
    }
}

extension BrowseEngine {
    static let srvType: UInt16 = 33

    func startDirect(_ direct: DirectResolve, _ core: LoopCore) throws(DiscoveryError) {
        try startResolve(direct.instance, core)
        if let probe = direct.renameProbe {
            probeOp = try? core.queryRecord(host: ServiceInstanceName.full(probe), type: Self.srvType, interface: 0) { [weak self, unowned core] reply in
                self?.probed(probe, reply, core)
            }
            probeTimer = core.schedule(after: DirectResolve.probeWindow) { [weak self] core in
                self?.probeTimer = nil
                self?.stopProbe(core)
            }
        }
        browseTimer = core.schedule(after: direct.browseAfter) { [weak self] core in
            guard let self else { return }
            self.browseTimer = nil
            // Only when the known instance is still unknown: a resolved one has its watch.
            if !self.instances.keys.contains(where: { $0.name == direct.instance }) { self.startFallbackBrowse(core) }
        }
    }

    /// Cancels everything the direct path has open (stop, or the responder went away).
    func stopDirect(_ core: LoopCore) {
        core.cancelTimer(browseTimer)
        browseTimer = nil
        core.cancelTimer(directTimer)
        directTimer = nil
        core.cancel(directOp)
        directOp = nil
        for (_, watch) in watches { core.cancel(watch.op) }
        watches = [:]
        for (_, timer) in watchTimers { core.cancelTimer(timer) }
        watchTimers = [:]
        core.cancelTimer(probeTimer)
        probeTimer = nil
        stopProbe(core)
    }

    private func stopProbe(_ core: LoopCore) {
        core.cancel(probeOp)
        probeOp = nil
    }

    private func startFallbackBrowse(_ core: LoopCore) {
        guard !stopped, !browsing, retryTimer == nil else { return }
        do {
            try startBrowse(core)
        } catch .noResponder {
            responderLost(core)
        } catch {
            browseTimer = core.schedule(after: Self.operationRetry) { [weak self] core in
                self?.browseTimer = nil
                self?.startFallbackBrowse(core)
            }
        }
    }

    /// Resolves the known instance on any interface (the reply says which).
    private func startResolve(_ name: String, _ core: LoopCore) throws(DiscoveryError) {
        directOp = try core.resolve(name: name, type: SessionID.serviceType + ".", domain: "local.",
                                    interface: 0) { [weak self, unowned core] reply in
            self?.resolvedDirectly(name, reply, core)
        }
    }

    /// The direct resolve of the known instance (again), after a failure or a refresh.
    func resolveDirectly(_ name: String, _ core: LoopCore) {
        do {
            try startResolve(name, core)
        } catch .noResponder {
            responderLost(core)
        } catch {
            retryDirectLater(name, core)
        }
    }

    /// Once the fallback browse runs, a name that did not resolve is left to it: resolving it
    /// again every few seconds would query the link for as long as the name is missing.
    private func retryDirectLater(_ name: String, _ core: LoopCore) {
        core.cancel(directOp)
        directOp = nil
        guard directTimer == nil, !browsing else { return }
        directTimer = core.schedule(after: Self.operationRetry) { [weak self] core in
            guard let self, !self.stopped else { return }
            self.directTimer = nil
            // Found meanwhile (by the browse or the watch): its own resolve has it.
            if !self.instances.keys.contains(where: { $0.name == name }) { self.resolveDirectly(name, core) }
        }
    }

    /// The known instance answered: from here on it is an instance like any the browse found
    /// (reported found, resolved, its addresses looked up on that interface), and watched.
    private func resolvedDirectly(_ name: String, _ reply: Reply, _ core: LoopCore) {
        switch reply {
        case .resolved(let interface, _, _, _):
            let op = directOp
            directOp = nil
            let key = ServiceKey(name: name, interface: interface)
            watchLater(key, core)
            if instances[key] != nil {          // found meanwhile, and resolved by its own resolve
                core.cancel(op)
                return
            }
            adopt(key, core).resolveOp = op
            resolved(key, reply, core)
        case .failed:
            retryDirectLater(name, core)
        default:
            break
        }
    }

    private func watchLater(_ key: ServiceKey, _ core: LoopCore) {
        guard watches[key] == nil, watchTimers[key] == nil else { return }
        watchTimers[key] = core.schedule(after: DirectResolve.randomDelay(in: DirectResolve.watchWindow)) { [weak self] core in
            guard let self, !self.stopped else { return }
            self.watchTimers[key] = nil
            self.watch(key, core)
        }
    }

    /// An instance found without the browse (resolved directly, or back in its watch): reported
    /// found like one the browse found.
    @discardableResult
    private func adopt(_ key: ServiceKey, _ core: LoopCore) -> Instance {
        let instance = Instance()
        instance.reportedFound = true
        instances[key] = instance
        emit(.found(key))
        return instance
    }

    /// Listens to the instance's SRV record on its interface: gone (a goodbye, or expiry) and back.
    private func watch(_ key: ServiceKey, _ core: LoopCore) {
        guard watches[key] == nil else { return }
        do {
            let op = try core.queryRecord(host: ServiceInstanceName.full(key.name), type: Self.srvType,
                                          interface: key.interface) { [weak self, unowned core] reply in
                self?.watched(key, reply, core)
            }
            watches[key] = (op, 0)
        } catch .noResponder {
            responderLost(core)
        } catch {
            // Without a watch a goodbye goes unseen; the link check still finds a receiver that
            // stopped answering (§6.4), so this is not worth failing for.
        }
    }

    private func watched(_ key: ServiceKey, _ reply: Reply, _ core: LoopCore) {
        guard var watch = watches[key] else { return }
        switch reply {
        case .record(let added, _, let type, _):
            guard type == Self.srvType else { return }
            watch.records = max(0, watch.records + (added ? 1 : -1))
            watches[key] = watch
            if watch.records == 0, !added, instances[key] != nil {
                forget(key, core)
                emit(.lost(key))
            } else if added, instances[key] == nil {
                adopt(key, core)
                resolve(key, core)
            }
        case .failed:
            core.cancel(watch.op)
            watches[key] = nil
            responderLost(core)
        default:
            break
        }
    }

    /// The rename of the wanted name exists: report it found (never resolved), so the follower
    /// tells the driver (``FollowReceiver/Action/renamed(name:asked:)``).
    private func probed(_ name: String, _ reply: Reply, _ core: LoopCore) {
        guard case .record(true, let interface, Self.srvType, _) = reply else { return }
        stopProbe(core)
        emit(.found(ServiceKey(name: name, interface: interface)))
    }
}
