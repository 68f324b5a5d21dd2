/// Limits how often secrets and pairing codes may be tried: every attempt — a hello
/// with a pairing code, a proof of the robot secret — takes a token from its source's bucket and
/// from one bucket shared by all sources, so neither one source nor a thousand spoofed ones can
/// guess faster than ``Options/totalRate``. An attempt without tokens is refused unevaluated
/// (deny reason 7, rate limited): even the right code is refused then.
///
/// The totals are counted for the receiver's log and summary: every failed attempt is visible.
package struct AttemptLimiter<Source: Hashable & Sendable>: Sendable {
    package typealias Options = AttemptLimiterOptions

    package let options: Options
    var perSource: [Source: TokenBucket] = [:]
    var total: TokenBucket
    /// Attempts evaluated and found wrong.
    package private(set) var failed = 0
    /// Attempts refused unevaluated (no tokens).
    package private(set) var throttled = 0

    package init(options: Options = Options()) {
        self.options = options
        total = TokenBucket(rate: options.totalRate, burst: options.totalBurst)
    }

    /// May `source` make one attempt now? Takes the tokens if so; counts a throttled attempt if not.
    package mutating func allow(_ source: Source, now: ContinuousClock.Instant) -> Bool {
        if perSource[source] == nil, perSource.count >= options.capacity {
            // Forgetting a source gives it a fresh burst of 5, but the shared bucket still holds.
            perSource.removeValue(forKey: perSource.keys.first!)
        }
        var mine = perSource[source] ?? TokenBucket(rate: options.perSourceRate, burst: options.perSourceBurst)
        defer { perSource[source] = mine }
        guard mine.peek(now: now) >= 1, total.peek(now: now) >= 1 else {
            throttled += 1
            return false
        }
        _ = mine.take(now: now)
        _ = total.take(now: now)
        return true
    }

    /// An allowed attempt turned out wrong.
    package mutating func failedAttempt() { failed += 1 }
}

/// How often pairing codes and secrets may be tried (``AttemptLimiter``).
package struct AttemptLimiterOptions: Sendable {
    /// Per source: a burst of 5, then one every 6 s (10 a minute).
    package var perSourceRate: Double = 1.0 / 6
    package var perSourceBurst: Double = 5
    /// All sources together: a burst of 40 (a whole class starting at once), then 2 a second;
    /// a guesser gets 7,200 tries an hour: nothing against 2^96 secrets, but a four-digit
    /// pairing code falls in about 40 minutes on average — the pairing code stops mistakes and
    /// casual guessing, not a determined guesser (Protocol.md "Security").
    package var totalRate: Double = 2
    package var totalBurst: Double = 40
    /// Sources remembered at once (the least recently seen are forgotten beyond it).
    package var capacity = 1024
    package init() {}
}
