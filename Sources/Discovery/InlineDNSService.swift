#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import SystemIO

/// dns_sd run inline in the caller's own poll loop: no thread of its own, no relay.
///
/// Contract: one thread only — the one that created it — calls everything here, and every
/// `DNSServiceRef` lives and dies on that thread. The caller adds ``descriptors`` (the refs'
/// reply sockets, `DNSServiceRefSockFD`) to its poll set, wakes up by ``nextDeadline`` too, and
/// calls ``process()`` after every wake-up; the handlers of its browses run inside that call.
/// This is what `control --session` uses: the send loop polls the DNS-SD sockets next to its
/// input and its state socket. (``DNSServiceLoop`` is the other way: a thread for programs
/// whose main loop cannot take more descriptors.)
package final class InlineDNSService {
    private let core: LoopCore

    /// Sets `AVAHI_COMPAT_NOWARN=1` first, as ``DNSServiceLoop`` does.
    package init() throws(DiscoveryError) {
        DNSServiceLoop.silenceCompatWarning()
        let wake: EventFlag
        do { wake = try EventFlag() } catch { throw .system(error) }
        // The inbox is never polled: nothing is posted from another thread.
        core = LoopCore(inbox: LoopInbox(wake: wake))
    }

    deinit { core.shutDown() }

    /// Every open operation's reply socket: poll them for readability.
    package var descriptors: [Int32] { core.descriptors }

    /// When ``process()`` has timer work (a retry, the address settle wait), if ever.
    package var nextDeadline: ContinuousClock.Instant? { core.nextTimer }

    /// Due timers, then whatever the daemon answered (never blocks). Handlers run in here.
    package func process() { core.serviceOnce() }

    /// Browses a session as ``SessionBrowser`` does (same events, same lookups and interest),
    /// reporting to `onEvent` from inside ``process()``. Throws
    /// ``DiscoveryError/noResponder(call:)`` at once when no mDNS responder is reachable.
    ///
    /// `knownInstance`: the instance name of the one receiver wanted (`--receiver NAME`, see
    /// ``InstanceName/forWanted(_:in:)``). It is resolved and watched without a browse; the
    /// browse starts only if it has not answered `browseAfter` later (default: a random 2–6 s),
    /// and `renameProbe` (`NAME [mark] #2`) is reported found if it exists (``DirectResolve``).
    package func browse(session: SessionID, lookups: SessionBrowser.Lookups = .once,
                       interest: @escaping @Sendable (String) -> Bool = { _ in true },
                       knownInstance: String? = nil, renameProbe: String? = nil, browseAfter: Duration? = nil,
                       onEvent: @escaping @Sendable (BrowserEvent) -> Void) throws(DiscoveryError) -> InlineBrowse {
        let direct = knownInstance.map {
            DirectResolve(instance: $0, browseAfter: browseAfter ?? DirectResolve.randomDelay(in: DirectResolve.browseWindow), renameProbe: renameProbe)
        }
        let engine = BrowseEngine(type: session.browseType, lookups: lookups, interest: interest, direct: direct, emit: onEvent)
        try engine.start(core)
        return InlineBrowse(core: core, id: core.adopt(engine), engine: engine)
    }

    /// Withdraws everything (stops every browse). Idempotent.
    package func shutdown() { core.shutDown() }
}

/// One browse of an ``InlineDNSService``; same thread rules.
package final class InlineBrowse {
    private let core: LoopCore
    private let id: UInt64
    private let engine: BrowseEngine

    init(core: LoopCore, id: UInt64, engine: BrowseEngine) {
        self.core = core
        self.id = id
        self.engine = engine
    }

    /// Resolves `instance` again (its address stopped answering).
    package func refresh(instance: String) { engine.refresh(instance, core) }

    /// Stops browsing and deallocates its operations. Idempotent.
    package func stop() { core.stopClient(id) }
}
