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

    /// Takes one token if there is one.
    public mutating func take(now: ContinuousClock.Instant) -> Bool {
        if let last {
            let elapsed = now - last
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(burst, tokens + max(0, seconds) * rate)
        }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
