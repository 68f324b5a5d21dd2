@testable import Receiver
import Testing

/// Drain pacing (issue 16): under many controllers the socket is read at most once per pause;
/// a single driver is never delayed, and a flood is never left in the kernel's queue.
@Suite struct DrainPacingTests {
    let t0 = ContinuousClock.now
    func ms(_ x: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int(x * 1000)) }

    /// One driver at 100 Hz, plus the bench's 1,000 samples/s: below `busyRate`, never held.
    @Test func aSingleDriverIsNeverHeld() {
        var pacing = DrainPacing()
        var t = 0.0
        while t < 1000 {
            pacing.drained(1, at: ms(t))
            #expect(pacing.holdUntil(now: ms(t + 0.05)) == nil, "held at \(t) ms")
            t += 1
        }
        #expect(!pacing.isPacing)
    }

    /// 64 and 256 controllers × 100 Hz: 6.4 and 25.6 datagrams per millisecond, above twice
    /// `busyRate`. After the first 100 ms window the next drain waits until 1 ms after the last
    /// one, never longer.
    @Test(arguments: [64, 256])
    func aClassIsReadOncePerMillisecond(controllers: Int) {
        var pacing = DrainPacing()
        let step = 10.0 / Double(controllers)
        var t = 0.0
        while t <= 101 {
            pacing.drained(1, at: ms(t))
            t += step
        }
        #expect(pacing.isPacing)
        let last = ms(t - step)
        #expect(pacing.holdUntil(now: last + .microseconds(200)) == last + .milliseconds(1))
        #expect(pacing.holdUntil(now: last + .microseconds(1001)) == nil, "past the pause: read at once")
    }

    /// The pause grows with the rate: nothing up to `busyRate`, then linearly to the longest
    /// pause at twice `busyRate`, and never beyond it.
    @Test(arguments: [(0.0, 0), (1_000, 0), (2_000, 0), (2_500, 250), (3_000, 500), (3_500, 750),
                      (4_000, 1_000), (6_400, 1_000), (25_600, 1_000), (1_000_000, 1_000)])
    func thePauseGrowsWithTheRate(rate: Double, microseconds: Int) {
        #expect(DrainPacing().pause(forRate: rate) == .microseconds(microseconds))
    }

    /// Through the loop's calls: a window at 3,000 datagrams/s holds the next drain 0.5 ms.
    @Test func aMeasuredRateSetsThePause() {
        var pacing = DrainPacing()
        for i in 0...400 { pacing.drained(1, at: t0 + .nanoseconds(Int64(i) * 333_333)) }
        let last = t0 + .nanoseconds(400 * 333_333)
        #expect(pacing.pause > .microseconds(450) && pacing.pause < .microseconds(550), "pause \(pacing.pause)")
        #expect(pacing.holdUntil(now: last) == last + pacing.pause)
    }

    /// The loop as it runs (drain, pause, drain), at rates from 1,000 to 200,000 datagrams/s: the
    /// wake-ups stay bounded (at most about 1.4 × `busyRate` a second, the worst just above it),
    /// no datagram waits longer than the longest pause, and below `busyRate` none waits.
    @Test(arguments: [1_000.0, 1_900, 2_000, 2_240, 2_500, 2_750, 3_000, 4_000, 6_400, 25_600, 60_000, 200_000])
    func wakeUpsStayBoundedAndNoDatagramWaitsLong(rate: Double) {
        var pacing = DrainPacing()
        let period = 1e9 / rate                          // ns between arrivals
        let end = 1e9                                    // one second
        var arrivals: [Double] = []
        var t = 0.0
        while t < end { arrivals.append(t); t += period }
        var next = 0                                     // first arrival not yet read
        var drains = 0, drainsAfterWarmUp = 0
        var longestWait = 0.0, longestWaitAfterWarmUp = 0.0
        var clock = 0.0
        while next < arrivals.count {
            // The loop: sleep out a pause, then wait for the socket to be readable, then drain it.
            if let hold = pacing.holdUntil(now: t0 + .nanoseconds(Int64(clock))) {
                clock = Double(Int64((hold - t0).components.attoseconds / 1_000_000_000))
                    + Double((hold - t0).components.seconds) * 1e9
            }
            clock = max(clock, arrivals[next])
            var count = 0
            while next < arrivals.count && arrivals[next] <= clock {
                longestWait = max(longestWait, clock - arrivals[next])
                if clock > 200e6 { longestWaitAfterWarmUp = max(longestWaitAfterWarmUp, clock - arrivals[next]) }
                next += 1
                count += 1
            }
            pacing.drained(count, at: t0 + .nanoseconds(Int64(clock)))
            drains += 1
            if clock > 200e6 { drainsAfterWarmUp += 1 }
        }
        let perSecond = Double(drainsAfterWarmUp) / 0.8
        #expect(perSecond <= 1.4 * DrainPacing.defaultBusyRate, "\(perSecond) wake-ups/s at \(rate)/s")
        #expect(longestWait < 1e6, "a datagram waited \(longestWait) ns")
        if rate < DrainPacing.defaultBusyRate {
            #expect(longestWaitAfterWarmUp == 0, "a datagram waited \(longestWaitAfterWarmUp) ns at \(rate)/s")
        }
    }

    /// A drain that came back with a full batch is followed by another at once: a flood stays in
    /// our buffers, not the kernel's, where it would push out the owner's datagrams.
    @Test func aFullDrainIsNotHeld() {
        var pacing = DrainPacing()
        for i in 0...100 { pacing.drained(300, at: ms(Double(i))) }
        #expect(pacing.isPacing)
        #expect(pacing.holdUntil(now: ms(100.1)) == nil)
        pacing.drained(5, at: ms(100.2))
        #expect(pacing.holdUntil(now: ms(100.3)) == ms(101.2))
    }

    /// When the class goes quiet, the first window that ends with a low rate ends the pacing.
    @Test func pacingEndsWhenTheRateFalls() {
        var pacing = DrainPacing()
        var t = 0.0
        while t <= 101 { pacing.drained(1, at: ms(t)); t += 0.04 }
        #expect(pacing.isPacing)
        pacing.drained(1, at: ms(150))
        pacing.drained(1, at: ms(260))
        #expect(!pacing.isPacing)
        #expect(pacing.holdUntil(now: ms(260.1)) == nil)
    }

    @Test func aZeroPauseNeverHolds() {
        var pacing = DrainPacing(maxPause: .zero)
        var t = 0.0
        while t <= 200 { pacing.drained(1, at: ms(t)); t += 0.1 }
        #expect(pacing.holdUntil(now: ms(200.05)) == nil)
    }
}
