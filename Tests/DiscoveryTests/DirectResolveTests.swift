@testable import Discovery
import Testing

/// A controller that knows its receiver's name starts its fallback browse and the watch on its
/// receiver at random moments (``DirectResolve``): a class of drivers started at once must not
/// send those queries — and the back-off repeats of them — in the same second.
@Suite struct DirectResolveTests {
    /// SplitMix64: a fixed sequence, so the spread below is the same on every run.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: [DirectResolve.browseWindow, DirectResolve.watchWindow])
    func thirtyDriversStartingAtOnceSpreadOverTheWindow(window: ClosedRange<Double>) {
        var rng = SplitMix(state: 20)
        let delays = (0..<30).map { _ in DirectResolve.randomDelay(in: window, using: &rng) }
        #expect(delays.allSatisfy { $0 >= .milliseconds(Int64(window.lowerBound * 1000)) && $0 <= .milliseconds(Int64(window.upperBound * 1000)) })
        // Per second of the window, at most 12 of 30 (uniform over 4 s: 7.5 expected; less over 12).
        var perSecond: [Int64: Int] = [:]
        for d in delays { perSecond[d.components.seconds, default: 0] += 1 }
        #expect(perSecond.values.allSatisfy { $0 <= 12 }, "\(perSecond)")
        #expect(perSecond.count >= 4, "\(perSecond)")
    }
}
