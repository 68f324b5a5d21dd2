#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The wall clock (CLOCK_REALTIME), for times that leave the process: a stop-all's timestamp, log
/// lines, a results file's name. It may jump; durations and deadlines use `ContinuousClock`.
package enum WallClock {
    package static func now() -> timespec {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return ts
    }

    /// Milliseconds since 1970 (0 for a clock set before it).
    package static func unixMillis() -> UInt64 { unixMillis(now()) }

    /// `ts` (a reading of ``now()``) in milliseconds since 1970 (0 before it).
    package static func unixMillis(_ ts: timespec) -> UInt64 {
        return UInt64(max(0, ts.tv_sec)) * 1000 + UInt64(max(0, ts.tv_nsec)) / 1_000_000
    }
}
