import ControlPlane

/// Log lines about individual sources: a burst of `burst`, then `perSecond` (a ``TokenBucket``).
/// ``allow(at:)`` returns nil to drop a line, or how many were dropped since the last one allowed.
struct NoticeLimiter: Sendable {
    private var bucket: TokenBucket
    private var suppressed = 0

    init(burst: Int = 20, perSecond: Int = 5) {
        bucket = TokenBucket(rate: Double(perSecond), burst: Double(burst))
    }

    mutating func allow(at now: ContinuousClock.Instant) -> Int? {
        guard bucket.take(now: now) else {
            suppressed += 1
            return nil
        }
        defer { suppressed = 0 }
        return suppressed
    }
}

/// At most one line per source per ``interval`` for notices a source can cause at will (its
/// hello accepted or denied): one controller saying hello 2000 times a second writes one line
/// every 10 s, not 20,000. Bounded: past ``capacity`` sources the record starts over.
struct PerSourceNotices<Source: Hashable & Sendable>: Sendable {
    var last: [Source: ContinuousClock.Instant] = [:]
    var interval: Duration = .seconds(10)
    static var capacity: Int { 1024 }

    /// True when `source` may have a line now (and then not again for ``interval``).
    mutating func allow(_ source: Source, at now: ContinuousClock.Instant) -> Bool {
        if let t = last[source], now - t < interval { return false }
        if last[source] == nil, last.count >= Self.capacity { last.removeAll(keepingCapacity: true) }
        last[source] = now
        return true
    }
}
