/// Percentiles of a set of samples, read off the sorted samples directly (no histogram buckets).
///
/// Nearest rank: the p-th percentile of n sorted samples is the sample at rank ⌈p/100 · n⌉
/// (1-based), so p50 of [1, 2, 3, 4] is 2, p100 is the maximum and p0 the minimum. Every value
/// reported is a sample that was measured, never an interpolation.
package struct Summary: Sendable, Hashable, Codable {
    package let count: Int
    package let min: Int64
    package let p50: Int64
    package let p90: Int64
    package let p99: Int64
    package let p999: Int64
    package let max: Int64
    package let mean: Double

    /// Nil for no samples.
    package init?(_ samples: [Int64]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        count = sorted.count
        min = sorted[0]
        max = sorted[sorted.count - 1]
        p50 = Self.percentile(50, ofSorted: sorted)
        p90 = Self.percentile(90, ofSorted: sorted)
        p99 = Self.percentile(99, ofSorted: sorted)
        p999 = Self.percentile(99.9, ofSorted: sorted)
        mean = Double(sorted.reduce(0, +)) / Double(sorted.count)
    }

    /// The nearest-rank percentile of an ascending, non-empty array.
    package static func percentile(_ p: Double, ofSorted sorted: [Int64]) -> Int64 {
        precondition(!sorted.isEmpty, "percentile of no samples")
        precondition((0...100).contains(p), "percentile \(p) is outside 0…100")
        // Rounded to 1e-9 first: 99.9 / 100 · 1000 is 999.0000000000001 in binary64, and its
        // ceiling must be 999, not 1000.
        let exact = (p / 100 * Double(sorted.count) * 1e9).rounded() / 1e9
        let rank = Swift.max(1, Int(exact.rounded(.up)))
        return sorted[Swift.min(rank, sorted.count) - 1]
    }
}

/// Samples of a measurement with the warm-up already cut off.
package struct SampleSet: Sendable {
    package private(set) var values: [Int64] = []
    /// Samples dropped at the start (caches, page faults, the first wake-ups of each thread).
    package let warmUp: Int
    private var seen = 0

    package init(warmUp: Int, expected: Int = 0) {
        self.warmUp = warmUp
        values.reserveCapacity(expected)
    }

    /// Records one sample; the first ``warmUp`` are discarded.
    package mutating func record(_ value: Int64) {
        seen += 1
        if seen > warmUp { values.append(value) }
    }

    package var summary: Summary? { Summary(values) }
}
