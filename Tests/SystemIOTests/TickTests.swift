import SystemIO
import Testing

/// ``Tick``: the receive engine's time (nanoseconds in an `Int64`). Its contracts are what keeps
/// the engine's timing the same as with `ContinuousClock.Instant`.
@Suite struct TickTests {
    /// Nanosecond offsets from now, with the signs and sizes the engine sees (and a
    /// few it should not), from a fixed seed.
    static let offsets: [Int64] = {
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        var values: [Int64] = [0, 1, -1, 999_999_999, 1_000_000_000, -1_000_000_001, 250_000_000, 86_400 * 1_000_000_000]
        for _ in 0..<500 {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            values.append(Int64(bitPattern: x >> 3) >> Int64(x % 40))
        }
        return values
    }()

    @Test func anInstantComesBackExactlyAndKeepsItsOrder() {
        let base = ContinuousClock.now
        for a in Self.offsets {
            let instant = base + .nanoseconds(a)
            #expect(Tick(instant).instant == instant, "\(a) ns")
            for b in Self.offsets.prefix(20) {
                let other = base + .nanoseconds(b)
                #expect((Tick(instant) < Tick(other)) == (instant < other))
                #expect(Tick(instant) - Tick(other) == a - b)
            }
        }
    }

    /// The receive loop reads the clock as a `Tick`; the rest of the program reads instants. Both
    /// must be the same clock, or the failsafe's deadlines would be off by the difference.
    @Test func nowReadsTheContinuousClock() {
        for _ in 0..<100 {
            let before = ContinuousClock.now
            let tick = Tick.now()
            let after = ContinuousClock.now
            #expect(Tick(before) <= tick && tick <= Tick(after), "\(before) \(tick) \(after)")
            #expect(before <= tick.instant && tick.instant <= after)
        }
    }

    /// The rate limits' and the pacing's seconds: the same `Double` as from `Duration.components`.
    @Test func secondsMatchDurationComponentsBitForBit() {
        for n in Self.offsets {
            let (whole, atto) = Duration.nanoseconds(n).components
            let expected = Double(whole) + Double(atto) / 1e18
            #expect(Tick.seconds(n).bitPattern == expected.bitPattern, "\(n) ns")
        }
    }

    @Test func durationsConvertAndSaturate() {
        #expect(Tick.nanoseconds(.milliseconds(250)) == 250_000_000)
        #expect(Tick.nanoseconds(.seconds(-3)) == -3_000_000_000)
        #expect(Tick.nanoseconds(.seconds(Int64.max)) == .max)
        #expect(Tick.nanoseconds(.seconds(Int64.min)) == .min)
        #expect(Tick(nanoseconds: .max - 1) + 10 == Tick(nanoseconds: .max))
        #expect(Tick(nanoseconds: .min + 1) + -10 == Tick(nanoseconds: .min))
        #expect(Tick(nanoseconds: .max) - Tick(nanoseconds: .min) == .max)
        #expect(Tick(nanoseconds: .min) - Tick(nanoseconds: .max) == .min)
    }
}
