import SystemIO

/// A per-source rate limit: `rate` tokens a second, at most `burst` saved up. Checked before a
/// datagram is decoded, so a flood costs one comparison per datagram.
///
/// Time is a ``Tick`` (nanoseconds in an `Int64`): the `Instant` forms convert and are for
/// callers off the per-datagram path (and tests).
package struct TokenBucket: Sendable {
    package let rate: Double
    package let burst: Double
    @usableFromInline var tokens: Double
    @usableFromInline var last: Tick?

    package init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
    }

    /// Refills up to `now` and returns the tokens there are (none taken).
    @inlinable
    package mutating func peek(at now: Tick) -> Double {
        refill(at: now)
        return tokens
    }

    /// Takes one token if there is one.
    @inlinable
    package mutating func take(at now: Tick) -> Bool {
        refill(at: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    package mutating func peek(now: ContinuousClock.Instant) -> Double { peek(at: Tick(now)) }
    package mutating func take(now: ContinuousClock.Instant) -> Bool { take(at: Tick(now)) }

    @inlinable
    mutating func refill(at now: Tick) {
        if let last {
            // It runs for every datagram, twice under `--accept any` (the source's bucket and
            // the notice limiter's): integer nanoseconds, no `Duration`.
            tokens = min(burst, tokens + max(0, Tick.seconds(now - last)) * rate)
        }
        last = now
    }
}
