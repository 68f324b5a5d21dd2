@testable import Receiver
import Testing

/// Drain pacing (issue 16): under many controllers the socket is read at most once per pause;
/// a single driver is never delayed, and a flood is never left in the kernel's queue.
@Suite struct DrainPacingTests {
    let t0 = ContinuousClock.now
    func ms(_ x: Double) -> ContinuousClock.Instant { t0 + .microseconds(Int(x * 1000)) }

    /// One driver at 100 Hz, plus the bench's 1,000 samples/s: below 2,000/s, never held.
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

    /// 64 controllers × 100 Hz: 6.4 datagrams per millisecond. After the first 100 ms window the
    /// next drain waits until 1 ms after the last one, never longer.
    @Test func aClassroomIsReadOncePerMillisecond() {
        var pacing = DrainPacing()
        var t = 0.0
        while t <= 101 {
            pacing.drained(1, at: ms(t))
            t += 0.156
        }
        #expect(pacing.isPacing)
        let last = ms(t - 0.156)
        #expect(pacing.holdUntil(now: last + .microseconds(200)) == last + .milliseconds(1))
        #expect(pacing.holdUntil(now: last + .microseconds(1001)) == nil, "past the pause: read at once")
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
        while t <= 101 { pacing.drained(1, at: ms(t)); t += 0.1 }
        #expect(pacing.isPacing)
        pacing.drained(1, at: ms(150))
        pacing.drained(1, at: ms(260))
        #expect(!pacing.isPacing)
        #expect(pacing.holdUntil(now: ms(260.1)) == nil)
    }

    @Test func aZeroPauseNeverHolds() {
        var pacing = DrainPacing(pause: .zero)
        var t = 0.0
        while t <= 200 { pacing.drained(1, at: ms(t)); t += 0.1 }
        #expect(pacing.holdUntil(now: ms(200.05)) == nil)
    }
}
