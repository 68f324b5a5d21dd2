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
            // One `components` (an Int128 division): it runs for every datagram, twice under
            // `--accept any` (the source's bucket and the notice limiter's).
            let (whole, atto) = (now - last).components
            let seconds = Double(whole) + Double(atto) / 1e18
            tokens = min(burst, tokens + max(0, seconds) * rate)
        }
        last = now
    }
}
