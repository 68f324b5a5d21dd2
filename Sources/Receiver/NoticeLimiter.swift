/// A token bucket for log lines about individual sources: a burst of `burst`, then `perSecond`.
/// ``allow(at:)`` returns nil to drop a line, or how many were dropped since the last one allowed.
struct NoticeLimiter: Sendable {
    let burst: Double
    let perSecond: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant?
    private var suppressed = 0

    init(burst: Int = 20, perSecond: Int = 5) {
        self.burst = Double(burst)
        self.perSecond = Double(perSecond)
        tokens = Double(burst)
    }

    mutating func allow(at now: ContinuousClock.Instant) -> Int? {
        if let last {
            let elapsed = now - last
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(burst, tokens + seconds * perSecond)
        }
        last = now
        guard tokens >= 1 else {
            suppressed += 1
            return nil
        }
        tokens -= 1
        defer { suppressed = 0 }
        return suppressed
    }
}
