/// Who the teacher kicked off this robot, and for how long they may not take it back
/// (Protocol.md §7.10, `kick`): a value with the time passed in.
import RemoteWire
///
/// The rule, for ``duration`` after the kick, against any source (address and port):
/// - the kicked source itself is held;
/// - by name: a source whose hello named the kicked controller's display name is held, from any
///   address and port (a restarted `control --name Ann` gets a new port, often a new address);
/// - by address: when a name cannot tell the student apart — the kicked source never named
///   itself, or the newcomer has not (a plain 8-byte sender) — a source from the kicked
///   source's host (its IP address, any port) is held.
///
/// A newcomer that names itself otherwise from the kicked host is not held: many students share
/// one address behind a phone server (`web`) or a NAT, and each of them is known by name only.
/// A student who restarts under another name on another machine is not held either; the teacher's
/// Lock is for that. A hold is never extended by the attempts it refuses.
///
/// `Source` is the full address; the caller gives each source's host as a `Source` too (the
/// same address with the port cleared), so the rule needs nothing but equality.
package struct KickHold<Source: Hashable & Sendable>: Sendable {
    package static var duration: Duration { .seconds(10) }
    /// Entries kept at most (the oldest hold goes first): bounded whatever a classroom does.
    package static var capacity: Int { 64 }

    struct Entry: Sendable {
        var source: Source
        var host: Source
        var name: WireText?
        var until: ContinuousClock.Instant
        /// Added for a newcomer the hold refused (it was told why): it does not start a new hold.
        var turnedAway: Bool
    }

    package enum Verdict: Sendable, Equatable {
        case free
        /// Held until `until`; `told`: this very source was already turned away (or kicked).
        case held(until: ContinuousClock.Instant, told: Bool)
    }

    private(set) var entries: [Entry] = []
    /// The latest end of any hold: past it nothing is held, whatever the entries say.
    package private(set) var until: ContinuousClock.Instant?

    package init() {}

    /// Nothing is held any more (or ever was) at `now`.
    package func isIdle(now: ContinuousClock.Instant) -> Bool { until.map { now >= $0 } ?? true }

    package var isEmpty: Bool { entries.isEmpty }

    /// The teacher kicked `source` (its host `host`, its hello's display name `name`, nil for a
    /// plain sender): held for ``duration`` from `now`.
    package mutating func kick(_ source: Source, host: Source, name: WireText?, now: ContinuousClock.Instant) {
        add(Entry(source: source, host: host, name: name, until: now + Self.duration, turnedAway: false), now: now)
    }

    /// A newcomer the hold refused was told so: remember it until the hold that caught it ends,
    /// so it is told once, and so its own name or host does not start a hold of its own.
    package mutating func turnedAway(_ source: Source, host: Source, until: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        add(Entry(source: source, host: host, name: nil, until: until, turnedAway: true), now: now)
    }

    /// May `source` (from `host`, named `name` in its hello, nil if it said none) take the robot?
    package func verdict(_ source: Source, host: Source, name: WireText?, now: ContinuousClock.Instant) -> Verdict {
        guard !isIdle(now: now) else { return .free }
        var held: ContinuousClock.Instant?
        for e in entries where now < e.until {
            if e.source == source { return .held(until: e.until, told: true) }
            guard !e.turnedAway else { continue }
            let byName = e.name != nil && name == e.name
            let byHost = e.host == host && (e.name == nil || name == nil)
            if byName || byHost { held = max(held ?? e.until, e.until) }
        }
        return held.map { .held(until: $0, told: false) } ?? .free
    }

    /// Whether `source` itself (this address and port) was kicked or turned away, and is held.
    package func holds(exactly source: Source, now: ContinuousClock.Instant) -> Bool {
        !isIdle(now: now) && entries.contains { $0.source == source && now < $0.until }
    }

    /// Forgets every hold (they have all ended: see ``isIdle(now:)``).
    package mutating func removeAll() {
        entries.removeAll()
        until = nil
    }

    private mutating func add(_ entry: Entry, now: ContinuousClock.Instant) {
        entries.removeAll { now >= $0.until || ($0.source == entry.source && $0.turnedAway == entry.turnedAway) }
        // Full: a newcomer's note goes first (a flood of them must not end a kick's hold), then the oldest.
        while entries.count >= Self.capacity {
            entries.remove(at: entries.firstIndex(where: \.turnedAway) ?? 0)
        }
        entries.append(entry)
        until = max(until ?? entry.until, entry.until)
    }
}
