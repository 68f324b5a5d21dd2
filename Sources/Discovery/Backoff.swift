/// Retry delays after the mDNS responder went away: 1, 2, 4, 8, 16, 30, 30… seconds.
package struct Backoff: Equatable, Sendable {
    package let first: Duration
    package let maximum: Duration
    private var next: Duration

    package init(first: Duration = .seconds(1), maximum: Duration = .seconds(30)) {
        self.first = first
        self.maximum = maximum
        self.next = first
    }

    /// The delay before the next attempt; each call doubles the one after, up to ``maximum``.
    package mutating func nextDelay() -> Duration {
        let d = next
        next = min(next * 2, maximum)
        return d
    }

    /// After a success: the next failure starts again from ``first``.
    package mutating func reset() { next = first }
}
