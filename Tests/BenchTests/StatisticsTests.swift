@testable import Bench
import Testing

@Suite struct StatisticsTests {
    @Test func nearestRankOnSmallSets() {
        let four: [Int64] = [1, 2, 3, 4]
        #expect(Summary.percentile(50, ofSorted: four) == 2)
        #expect(Summary.percentile(75, ofSorted: four) == 3)
        #expect(Summary.percentile(76, ofSorted: four) == 4)
        #expect(Summary.percentile(100, ofSorted: four) == 4)
        #expect(Summary.percentile(0, ofSorted: four) == 1)
        #expect(Summary.percentile(99.9, ofSorted: [7]) == 7)
    }

    /// p99.9 of 1000 samples is the 999th, not the 1000th: 99.9/100·1000 is 999.0000000000001 in
    /// binary64, and a plain ceiling would pick the maximum.
    @Test(arguments: [1000, 10_000, 100_000])
    func tailPercentilesPickTheRightRank(n: Int) {
        let samples = (1...Int64(n)).map { $0 }
        #expect(Summary.percentile(99.9, ofSorted: samples) == Int64(n) * 999 / 1000)
        #expect(Summary.percentile(99, ofSorted: samples) == Int64(n) * 99 / 100)
        #expect(Summary.percentile(50, ofSorted: samples) == Int64(n) / 2)
    }

    @Test func summarySortsAndReportsSamplesThatWereMeasured() throws {
        let samples: [Int64] = [50, 10, 40, 20, 30, 1000, 60, 70, 80, 90]
        let s = try #require(Summary(samples))
        #expect(s.count == 10)
        #expect(s.min == 10)
        #expect(s.max == 1000)
        #expect(s.p50 == 50)
        #expect(s.p90 == 90)
        #expect(s.p99 == 1000)
        #expect(s.mean == 145)
        for value in [s.p50, s.p90, s.p99, s.p999] { #expect(samples.contains(value)) }
    }

    @Test func noSamplesNoSummary() {
        #expect(Summary([]) == nil)
    }

    @Test func warmUpSamplesAreDropped() throws {
        var set = SampleSet(warmUp: 3)
        for v: Int64 in [900, 800, 700, 1, 2, 3] { set.record(v) }
        #expect(set.values == [1, 2, 3])
        #expect(try #require(set.summary).max == 3)
    }

    @Test func pacerStaysInItsRangeAndRepeatsWithItsSeed() {
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42)
        let first = (0..<100).map { _ in Int64.random(in: 500_000...1_500_000, using: &a) }
        let second = (0..<100).map { _ in Int64.random(in: 500_000...1_500_000, using: &b) }
        #expect(first == second)
        #expect(first.allSatisfy { (500_000...1_500_000).contains($0) })
        #expect(Set(first).count > 90)
    }
}
