/// Retry delays after the mDNS responder went away: 1, 2, 4, 8, 16, 30, 30… seconds.
public struct Backoff: Equatable, Sendable {
    public let first: Duration
    public let maximum: Duration
    private var next: Duration

    public init(first: Duration = .seconds(1), maximum: Duration = .seconds(30)) {
        self.first = first
        self.maximum = maximum
        self.next = first
    }

    /// The delay before the next attempt; each call doubles the one after, up to ``maximum``.
    public mutating func nextDelay() -> Duration {
        let d = next
        next = min(next * 2, maximum)
        return d
    }

    /// After a success: the next failure starts again from ``first``.
    public mutating func reset() { next = first }
}
