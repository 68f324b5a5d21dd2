#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A point on the continuous clock as whole nanoseconds since its epoch, in one `Int64`: for
/// state machines that compare and add times on every datagram (the receive engine, the rate
/// limits, drain pacing).
///
/// Why not `ContinuousClock.Instant`: the standard library is built resiliently, so outside it an
/// `Instant` (and every struct or enum holding one) is copied, compared and added through
/// out-of-line calls, and `Duration` arithmetic is `Int128` (callgrind: most of the
/// receive engine's ~3,400 instructions a datagram). The receive loop reads the clock as a
/// `Tick` (``now()``) and makes an `Instant` of it only for what still takes one.
///
/// Contracts:
/// - ``now()`` reads the very clock `ContinuousClock.now` reads (CLOCK_BOOTTIME on Linux, what
///   the Swift runtime uses; `TickTests` fails should that ever differ).
/// - Exact for instants a whole number of nanoseconds from the epoch (the clock's resolution):
///   `Tick(a) < Tick(b)` iff `a < b` then, and ``instant`` gives back the very `Instant`.
/// - Arithmetic saturates at `Int64`'s ends (±292 years) instead of trapping: a huge timeout or
///   a far-off instant from a test never crashes the receiver.
@frozen
package struct Tick: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the continuous clock's epoch (`ContinuousClock().systemEpoch`).
    package var nanoseconds: Int64

    @inlinable
    package init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// Now, on the continuous clock: one `clock_gettime`, no `Instant`.
    package static func now() -> Tick {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return Tick(nanoseconds: Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec))
    }

    /// The instant (truncated below a nanosecond, saturating). One `Int128` division: for the
    /// loop's edges and for tests, not per datagram.
    package init(_ instant: ContinuousClock.Instant) {
        nanoseconds = Tick.nanoseconds(instant - ContinuousClock().systemEpoch)
    }

    /// The same point as a `ContinuousClock.Instant`.
    package var instant: ContinuousClock.Instant { ContinuousClock().systemEpoch + .nanoseconds(nanoseconds) }

    /// A duration in whole nanoseconds (truncated below a nanosecond, saturating).
    package static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return saturating(scaled, attoseconds / 1_000_000_000)
    }

    @inlinable
    package static func < (a: Tick, b: Tick) -> Bool { a.nanoseconds < b.nanoseconds }

    /// `tick` moved by `nanoseconds`.
    @inlinable
    package static func + (tick: Tick, nanoseconds: Int64) -> Tick {
        Tick(nanoseconds: saturating(tick.nanoseconds, nanoseconds))
    }

    /// Nanoseconds from `b` to `a`.
    @inlinable
    package static func - (a: Tick, b: Tick) -> Int64 { saturating(a.nanoseconds, -max(b.nanoseconds, -.max)) }

    /// `a + b`, clamped to `Int64`'s range.
    @inlinable
    package static func saturating(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? .min : .max) : sum
    }

    /// Seconds in `nanoseconds`, as `Duration.components` would give them for the same span
    /// (whole seconds plus the fraction, each converted apart: the same `Double` bit for bit).
    @inlinable
    package static func seconds(_ nanoseconds: Int64) -> Double {
        Double(nanoseconds / 1_000_000_000) + Double(nanoseconds % 1_000_000_000) / 1e9
    }

    package var description: String { "Tick(\(nanoseconds) ns)" }
}
