import SystemIO
import RemoteWire

/// A receiver of the session, as far as discovery knows: announced, resolved and reachable.
package struct DiscoveredReceiver: Equatable, Sendable, CustomStringConvertible {
    /// Its display name within the session (what people see and `--receiver NAME` matches):
    /// "robot2", or "robot2 #2" when another receiver of the session already had "robot2".
    /// For an instance without the session's mark (announced by hand or by an older version)
    /// it is the instance name.
    package let name: String
    /// The DNS-SD instance name, unique on the link: `robot2 [6c11ba5f]` (Protocol.md §6.1).
    /// As it came (DNS-SD calls need it exactly): quote it before showing it.
    package let instance: String
    /// The display name it asked for, when the responder renamed it within the session (escaped
    /// like ``name``).
    package let renamedFrom: String?
    package var announcement: ReceiverAnnouncement
    /// The host target of its SRV record, e.g. `robot-pc.local.`.
    package var host: String
    package var port: UInt16
    /// Every address it can be reached at, best first (IPv4, then routable IPv6, then link-local).
    package var addresses: [SocketAddress]
    /// The interfaces it was seen on.
    package var interfaces: [UInt32]
    /// Notes on its TXT record (assumed defaults).
    package var notes: [String]

    package init(name: String, instance: String? = nil, renamedFrom: String? = nil, announcement: ReceiverAnnouncement,
                host: String, port: UInt16, addresses: [SocketAddress], interfaces: [UInt32], notes: [String]) {
        self.name = name
        self.instance = instance ?? name
        self.renamedFrom = renamedFrom
        self.announcement = announcement
        self.host = host
        self.port = port
        self.addresses = addresses
        self.interfaces = interfaces
        self.notes = notes
    }

    /// The best address (``ReceiverDirectory/preferred(_:_:)``): where a controller starts
    /// sending. It then keeps its address while it is announced and answers (``FollowReceiver``).
    package var destination: SocketAddress? { addresses.first }

    /// The display name of an instance of `session` (see ``DiscoveredReceiver/name``), with its
    /// control characters escaped (``DisplayText``): an instance name is anyone's text, and is
    /// shown and logged.
    package static func displayName(instance: String, session: SessionID) -> String {
        DisplayText.sanitised(InstanceName.parse(instance, in: session)?.display ?? instance)
    }

    package var description: String {
        "\"\(name)\" \(destination.map(String.init(describing:)) ?? "?") v=\(announcement.version) peer=\(announcement.peer)"
    }
}

package enum DirectoryChange: Equatable, Sendable {
    /// Complete for the first time (resolved, TXT usable and of this session, an address known).
    case available(DiscoveredReceiver)
    /// Its destination, port, host or TXT changed.
    case updated(DiscoveredReceiver)
    /// Gone from every interface (or its TXT stopped being usable); `name` is its display name.
    case unavailable(name: String)
    /// Resolved, but not a receiver of this session (a hash collision shows up here as a session
    /// mismatch) or of a protocol version this build does not speak.
    case ignored(name: String, reason: String)
}

/// The receivers of one session, built from ``BrowserEvent``s. A value-type state machine: feed
/// it events and the time, read the changes it returns.
///
/// Responder restarts: on ``BrowserEvent/responderLost(retryIn:)`` every sighting turns stale but
/// stays (the receivers are most likely still there); once the responder is back, sightings not
/// reported again within ``refreshGrace`` are dropped by ``expire(now:)``.
package struct ReceiverDirectory: Sendable {
    package let session: SessionID
    package let refreshGrace: Duration

    struct Sighting: Sendable {
        var host: String?
        var port: UInt16 = 0
        var txt: [UInt8]?
        var addresses: [SocketAddress] = []
        var stale = false
    }

    struct Entry: Sendable {
        var sightings: [UInt32: Sighting] = [:]
        var published: DiscoveredReceiver?
        var lastIgnoredReason: String?
    }

    private var entries: [String: Entry] = [:]
    private var staleDeadline: ContinuousClock.Instant?
    private var responderDown = false

    package init(session: SessionID, refreshGrace: Duration = .seconds(3)) {
        self.session = session
        self.refreshGrace = refreshGrace
    }

    /// Receivers now available, by name.
    package var receivers: [DiscoveredReceiver] {
        entries.values.compactMap(\.published).sorted { $0.name < $1.name }
    }

    /// A receiver by display name, instance name or peer id.
    package func receiver(named name: String) -> DiscoveredReceiver? {
        receivers.first { $0.name == name } ?? entries[name]?.published
            ?? receivers.first { !$0.announcement.peer.isEmpty && $0.announcement.peer == name }
    }

    /// When ``expire(now:)`` has work to do, if ever.
    package var nextDeadline: ContinuousClock.Instant? { staleDeadline }

    package mutating func apply(_ event: BrowserEvent, now: ContinuousClock.Instant) -> [DirectoryChange] {
        switch event {
        case .found(let key):
            entries[key.name, default: Entry()].sightings[key.interface, default: Sighting()].stale = false
            return recompute(key.name)
        case .resolved(let key, let host, let port, let txt):
            var s = entries[key.name, default: Entry()].sightings[key.interface] ?? Sighting()
            s.host = host; s.port = port; s.txt = txt; s.stale = false
            entries[key.name, default: Entry()].sightings[key.interface] = s
            return recompute(key.name)
        case .addresses(let key, let addresses):
            guard entries[key.name]?.sightings[key.interface] != nil else { return [] }
            entries[key.name]?.sightings[key.interface]?.addresses = addresses
            entries[key.name]?.sightings[key.interface]?.stale = false
            return recompute(key.name)
        case .lost(let key):
            entries[key.name]?.sightings[key.interface] = nil
            return recompute(key.name)
        case .responderLost:
            responderDown = true
            staleDeadline = nil
            entries = entries.mapValues { entry in
                var e = entry
                e.sightings = e.sightings.mapValues { var s = $0; s.stale = true; return s }
                return e
            }
            return []
        case .responderBack:
            responderDown = false
            let anyStale = entries.values.contains { $0.sightings.values.contains(where: \.stale) }
            staleDeadline = anyStale ? now + refreshGrace : nil
            return []
        }
    }

    /// Drops sightings that were not reported again within ``refreshGrace`` after the responder
    /// came back.
    package mutating func expire(now: ContinuousClock.Instant) -> [DirectoryChange] {
        guard let deadline = staleDeadline, now >= deadline, !responderDown else { return [] }
        staleDeadline = nil
        var changes: [DirectoryChange] = []
        for name in entries.keys.sorted() {
            guard var entry = entries[name] else { continue }
            let before = entry.sightings.count
            entry.sightings = entry.sightings.filter { !$0.value.stale }
            entries[name] = entry
            if entry.sightings.count != before { changes += recompute(name) }
        }
        return changes
    }

    private mutating func recompute(_ name: String) -> [DirectoryChange] {
        guard var entry = entries[name] else { return [] }
        var changes: [DirectoryChange] = []
        let (current, problem) = Self.view(name: name, entry.sightings, session: session)
        if let current {
            if entry.published == nil { changes.append(.available(current)) }
            else if entry.published != current { changes.append(.updated(current)) }
            entry.published = current
            entry.lastIgnoredReason = nil
        } else {
            if let problem {
                if let published = entry.published { changes.append(.unavailable(name: published.name)); entry.published = nil }
                if entry.lastIgnoredReason != problem {
                    changes.append(.ignored(name: DiscoveredReceiver.displayName(instance: name, session: session), reason: problem))
                }
                entry.lastIgnoredReason = problem
            } else if let published = entry.published,
                      !published.interfaces.contains(where: { entry.sightings[$0] != nil }) {
                // Not complete again yet, and nothing left of the interfaces it was seen on.
                changes.append(.unavailable(name: published.name))
                entry.published = nil
            }
        }
        entries[name] = entry.sightings.isEmpty ? nil : entry
        return changes
    }

    /// The receiver the sightings describe, or why they describe none (nil, nil: not complete yet).
    static func view(name: String, _ sightings: [UInt32: Sighting], session: SessionID) -> (DiscoveredReceiver?, String?) {
        let resolved = sightings.sorted { $0.key < $1.key }.filter { $0.value.host != nil && $0.value.txt != nil }
        guard let first = resolved.first, let txtBytes = first.value.txt, let host = first.value.host else { return (nil, nil) }
        guard let txt = TXTRecord.decode(txtBytes) else { return (nil, "its TXT record is malformed") }
        switch ReceiverAnnouncement.read(txt) {
        case .unusable(let reason):
            return (nil, reason)
        case .usable(let announcement, let notes):
            guard announcement.session.utf8.elementsEqual(session.text.utf8) else {
                return (nil, "its session \"\(DisplayText.sanitised(announcement.session))\" is not \"\(session.text)\" (same subtype: a hash collision)")
            }
            let addresses = resolved.flatMap(\.value.addresses)
            var unique: [SocketAddress] = []
            for a in addresses.sorted(by: preferred) where !unique.contains(a) { unique.append(a) }
            guard !unique.isEmpty else { return (nil, nil) }
            let parsed = InstanceName.parse(name, in: session)
            return (DiscoveredReceiver(name: DiscoveredReceiver.displayName(instance: name, session: session), instance: name,
                             renamedFrom: parsed?.rename == nil ? nil : parsed.map { DisplayText.sanitised($0.asked) },
                             announcement: announcement, host: host, port: first.value.port,
                             addresses: unique, interfaces: resolved.map(\.key), notes: notes), nil)
        }
    }

    /// IPv4 before IPv6, routable before link-local; then by text, so the order is stable.
    package static func preferred(_ a: SocketAddress, _ b: SocketAddress) -> Bool {
        func rank(_ x: SocketAddress) -> Int { x.family == .inet ? (x.isLinkLocal ? 1 : 0) : (x.isLinkLocal ? 3 : 2) }
        let (ra, rb) = (rank(a), rank(b))
        return ra != rb ? ra < rb : a.description < b.description
    }
}
