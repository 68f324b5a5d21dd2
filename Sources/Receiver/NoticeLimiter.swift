import ControlPlane
import SystemIO

/// Log lines about individual sources: a burst of `burst`, then `perSecond` (a ``TokenBucket``).
/// ``allow(at:)`` returns nil to drop a line, or how many were dropped since the last one allowed.
struct NoticeLimiter: Sendable {
    private var bucket: TokenBucket
    private var suppressed = 0
    /// While the bucket is empty: when its next token comes. Until then a line is dropped after
    /// one comparison — under `--accept any` every datagram from another source than the last
    /// asks (a refill skipped here is made up by the next one: below one token the burst cap
    /// cannot bind, so the count is exact).
    private var emptyUntil: Tick?

    init(burst: Int = 20, perSecond: Int = 5) {
        bucket = TokenBucket(rate: Double(perSecond), burst: Double(burst))
    }

    mutating func allow(at now: Tick) -> Int? {
        if let emptyUntil, now < emptyUntil {
            suppressed += 1
            return nil
        }
        guard bucket.take(at: now) else {
            suppressed += 1
            let missing = 1 - bucket.peek(at: now)
            emptyUntil = now + Int64(max(0, missing) / bucket.rate * 1e9)
            return nil
        }
        emptyUntil = nil
        defer { suppressed = 0 }
        return suppressed
    }

    mutating func allow(at now: ContinuousClock.Instant) -> Int? { allow(at: Tick(now)) }
}
