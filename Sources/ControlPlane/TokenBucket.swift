/// A per-source rate limit: `rate` tokens a second, at most `burst` saved up. Checked before a
/// datagram is decoded, so a flood costs one comparison per datagram.
public struct TokenBucket: Sendable {
    public let rate: Double
    public let burst: Double
    var tokens: Double
    var last: ContinuousClock.Instant?

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
    }

    /// Refills up to `now` and returns the tokens there are (none taken).
    public mutating func peek(now: ContinuousClock.Instant) -> Double {
        refill(now: now)
        return tokens
    }

    /// Takes one token if there is one.
    public mutating func take(now: ContinuousClock.Instant) -> Bool {
        refill(now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    mutating func refill(now: ContinuousClock.Instant) {
        if let last {
            let elapsed = now - last
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(burst, tokens + max(0, seconds) * rate)
        }
        last = now
    }
}
