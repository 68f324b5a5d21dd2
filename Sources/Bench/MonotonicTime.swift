#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemIO

/// CLOCK_MONOTONIC in nanoseconds: one clock for every thread and every process of the machine,
/// so a stamp taken in one process can be subtracted from a stamp taken in another.
package enum Monotonic {
    @inline(__always)
    package static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Sleeps until `deadline` (absolute, in ``now()``'s nanoseconds); returns at once if it has passed.
    package static func sleep(until deadline: Int64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    package static func sleep(nanoseconds: Int64) {
        sleep(until: now() + nanoseconds)
    }

    /// Timer slack: Linux adds 50 µs to every sleep of a normal thread by default; a 100 Hz ×
    /// 256-controller sender sleeps 39 µs at a time, so it asks for 1 ns (``TimerSlack``).
    package static func tightenTimerSlack() {
        TimerSlack.tighten()
    }
}

/// A small, seeded pseudo-random generator (SplitMix64), so a run's pacing can be repeated.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The pause between two latency samples: random within a range, so samples do not lock onto
/// a periodic event (a controller's 20 ms resend, a timer tick). Every latency series in a run,
/// the floors included, is paced the same way, so each one starts from the same idle machine.
package struct Pacer: Sendable {
    package let range: ClosedRange<Int64>
    private var random: SplitMix64

    package init(microseconds range: ClosedRange<Int64> = 500...1500, seed: UInt64 = 0x5EED) {
        self.range = range.lowerBound * 1000...range.upperBound * 1000
        random = SplitMix64(seed: seed)
    }

    package mutating func pause() {
        Monotonic.sleep(nanoseconds: nextPause())
    }

    /// The next pause, in nanoseconds, for a caller that has something to do meanwhile.
    package mutating func nextPause() -> Int64 {
        Int64.random(in: range, using: &random)
    }
}
