import DriveRecord
import Receiver
import Testing

/// The black box's ring keeps the last window of entries in memory allocated once: ten minutes
/// at 100 Hz, or a flood, leave it the same size.
@Suite struct BlackBoxRingTests {
    /// 10 minutes at 100 Hz, a state and a board write per packet: the ring holds the last 30 s
    /// (about 6,000 entries) and its storage never grows past its capacity.
    @Test func tenMinutesAt100HzKeepTheLast30SecondsInFixedMemory() {
        var ring = BlackBoxRing(window: .seconds(30))
        let capacity = ring.capacity
        var peakAllocated = 0
        for i in 0..<(10 * 60 * 100) {
            let micros = Int64(i) * 10_000
            ring.append(RecordEntry(micros: micros, event: .state(angle: Float(i % 100) / 100, buttons: 1)))
            ring.append(RecordEntry(micros: micros, event: .board([.init(address: 0x22, value: UInt8(i % 256))])))
            peakAllocated = max(peakAllocated, ring.allocated)
        }
        #expect(peakAllocated <= capacity)
        #expect(ring.count == 6002)
        let entries = ring.entries
        #expect(entries.first?.micros == Int64(569_990_000))
        #expect(entries.last?.micros == Int64(599_990_000))
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.micros <= $1.micros })
    }

    /// A flood (many entries within the window) is cut at the capacity: the newest are kept.
    @Test func aFloodIsCutAtTheCapacityKeepingTheNewest() {
        var ring = BlackBoxRing(window: .seconds(30), capacity: 1000)
        for i in 0..<100_000 { ring.append(RecordEntry(micros: Int64(i), event: .resumed)) }
        #expect(ring.count == 1000 && ring.allocated == 1000)
        #expect(ring.entries.first?.micros == 99_000 && ring.entries.last?.micros == 99_999)
    }

    @Test func entriesOlderThanTheWindowLeave() {
        var ring = BlackBoxRing(window: .seconds(1))
        ring.append(RecordEntry(micros: 0, event: .resumed))
        ring.append(RecordEntry(micros: 500_000, event: .teacher(stopped: true)))
        ring.append(RecordEntry(micros: 1_600_000, event: .teacher(stopped: false)))
        #expect(ring.entries.map(\.micros) == [1_600_000])
    }
}
