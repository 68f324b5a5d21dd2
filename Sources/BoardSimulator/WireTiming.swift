/// The time one byte takes on a serial wire: 10 bits (start, 8 data, stop) at `baud`.
/// 9600 baud ≈ 1.04 ms a byte, 115200 ≈ 87 µs.
package struct WireTiming: Sendable, Hashable {
    package let baud: Int
    package let byteTime: Duration

    package init(baud: Int) {
        precondition(baud > 0)
        self.baud = baud
        byteTime = .nanoseconds(10 * 1_000_000_000 / Int64(baud))
    }

    /// Whole bytes that fit between `start` and `now` (0 if `now` is before `start`).
    package func bytes(from start: ContinuousClock.Instant, to now: ContinuousClock.Instant) -> Int {
        guard now >= start else { return 0 }
        return Int((now - start) / byteTime)
    }
}
