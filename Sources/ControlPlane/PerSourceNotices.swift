/// At most one line per source per ``interval`` for notices a source can cause at will (its
/// hello accepted or denied, its WebSocket refused): one controller saying hello 2000 times a
/// second writes one line every 10 s, not 20,000. Bounded: past ``capacity`` sources the record
/// starts over.
package struct PerSourceNotices<Source: Hashable & Sendable>: Sendable {
    var last: [Source: ContinuousClock.Instant] = [:]
    package var interval: Duration
    package static var capacity: Int { 1024 }

    package init(interval: Duration = .seconds(10)) { self.interval = interval }

    /// True when `source` may have a line now (and then not again for ``interval``).
    package mutating func allow(_ source: Source, at now: ContinuousClock.Instant) -> Bool {
        if let t = last[source], now - t < interval { return false }
        if last[source] == nil, last.count >= Self.capacity { last.removeAll(keepingCapacity: true) }
        last[source] = now
        return true
    }
}
