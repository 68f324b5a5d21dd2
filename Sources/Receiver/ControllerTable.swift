import RemoteWire
import SystemIO

/// What the receiver knows about one source address (controller), for the status line, logs and
/// the summary.
package struct ControllerRecord: Sendable, Equatable {
    /// The last valid state it sent (applied or not).
    package var lastState: ControllerState?
    /// When its first and its latest datagram came (``Tick``: compared on every datagram).
    package var firstTick: Tick
    package var lastTick: Tick
    package var firstSeen: ContinuousClock.Instant { firstTick.instant }
    package var lastSeen: ContinuousClock.Instant { lastTick.instant }
    /// Every datagram from it.
    package var datagrams = 0
    /// Valid state packets.
    package var states = 0
    /// 8-byte datagrams refused by the decoder (NaN/infinite angle).
    package var bad = 0
    /// Datagrams of other sizes (reserved for control messages), dropped.
    package var control = 0
    /// Valid states dropped because another controller owns the robot.
    package var ignored = 0
    /// Set once its first ignored/bad packet has been logged ("logged once per source").
    package var loggedIgnored = false
    package var loggedBad = false
    package var loggedControl = false

    // Packets per second: datagrams counted in one-second windows.
    var windowStart: Tick
    var windowCount = 0
    var previousWindowCount = 0

    init(at now: Tick) {
        firstTick = now
        lastTick = now
        windowStart = now
    }

    mutating func count(at now: Tick) {
        roll(to: now)
        datagrams += 1
        windowCount += 1
        lastTick = now
    }

    mutating func roll(to now: Tick) {
        let second: Int64 = 1_000_000_000
        let elapsed = now - windowStart
        guard elapsed >= second else { return }
        previousWindowCount = elapsed < 2 * second ? windowCount : 0
        windowCount = 0
        windowStart = elapsed < 2 * second ? windowStart + second : now
    }

    /// Datagrams in the last full one-second window (0 after two quiet seconds).
    package func packetsPerSecond(at now: Tick) -> Int {
        var copy = self
        copy.roll(to: now)
        return copy.previousWindowCount
    }

    package func packetsPerSecond(at now: ContinuousClock.Instant) -> Int { packetsPerSecond(at: Tick(now)) }
}

/// Per-source bookkeeping with a hard cap: a flood of source ports cannot grow memory without
/// limit. When full, the stalest fourth is evicted in one pass (amortised O(1) per new
/// source), never the one the caller protects (the owner).
package struct ControllerTable<Source: Hashable & Sendable>: Sendable {
    package let capacity: Int
    package private(set) var records: [Source: ControllerRecord] = [:]
    /// Records dropped to stay under ``capacity``.
    package private(set) var evicted = 0

    package init(capacity: Int = 1024) {
        precondition(capacity >= 4)
        self.capacity = capacity
        records.reserveCapacity(capacity)
    }

    package subscript(source: Source) -> ControllerRecord? { records[source] }
    package var count: Int { records.count }

    /// Counts one datagram from `source` and returns its record for the caller to update in place.
    package mutating func touch(_ source: Source, at now: Tick, protecting owner: Source?,
                               _ update: (inout ControllerRecord) -> Void) {
        // Count first: a table that is not full needs no lookup here (one hash a datagram, not two).
        if records.count >= capacity && records[source] == nil {
            evictStalest(protecting: owner)
        }
        update(&records[source, default: ControllerRecord(at: now)])
    }

    mutating func evictStalest(protecting owner: Source?) {
        let victims = records
            .filter { $0.key != owner }
            .sorted { $0.value.lastTick < $1.value.lastTick }
            .prefix(max(1, capacity / 4))
        for victim in victims { records[victim.key] = nil }
        evicted += victims.count
    }
}
