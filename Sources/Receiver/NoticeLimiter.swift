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
