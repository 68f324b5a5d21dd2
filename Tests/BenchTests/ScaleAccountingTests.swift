@testable import Bench
import Testing

/// The bookkeeping of the scale runs: which `W` answers which marked packet, and what /proc says.
@Suite struct ScaleAccountingTests {
    static let a = Stimulus.expectedWrites[0], b = Stimulus.expectedWrites[1]

    @Test func eachMarkTakesTheFirstWriteOfItsStateBeforeTheNextMark() {
        let marks: [(t0: Int64, state: Int)] = [(100, 0), (200, 1), (300, 0), (400, 1)]
        let writes = [
            StampedLine(start: 90, bytes: Self.b),    // before the first mark: ignored
            StampedLine(start: 130, bytes: Self.a),   // mark 0: 30
            StampedLine(start: 150, bytes: Self.a),   // a repeat of the same state: not a second answer
            StampedLine(start: 260, bytes: Self.b),   // mark 1: 60
            // mark 2 gets no W of its state before mark 3 (conflated away): lost
            StampedLine(start: 410, bytes: Self.b),   // mark 3: 10
        ]
        let (latencies, lost) = ScaleRun.match(marks: marks, writes: writes)
        #expect(latencies == [30, 60, 10])
        #expect(lost == 1)
    }

    @Test func theExpectedWritesAreTheKitMotorLine() {
        #expect(String(decoding: Self.a, as: UTF8.self).hasPrefix("W 22 "))
        #expect(Self.a.count == 10 && Self.b.count == 10)
        #expect(Self.a != Self.b)
    }

    @Test func statFieldsAreCountedAfterTheLastParenthesis() throws {
        // A thread name may hold spaces and parentheses.
        let line = "4242 (board (serial) x) S 1 4242 4242 0 -1 4194560 700 0 0 0 123 45 0 0 20 0 3 0 100 0 0"
        let ticks = try #require(ProcessStats.statTicks(text: line))
        #expect(ticks.user == 123)
        #expect(ticks.system == 45)
    }

    @Test func udpDropsComeFromTheRowOfThePort() {
        let table = """
              sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
           1: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 111 2 0000000000000000 0
           2: 00000000000000000000000000000000:9C41 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 222 2 0000000000000000 17
        """
        #expect(ProcessStats.udpDrops(port: 0x9C41, table: table) == 17)
        #expect(ProcessStats.udpDrops(port: 0x1F90, table: table) == 0)
        #expect(ProcessStats.udpDrops(port: 1234, table: table) == nil)
    }

    @Test func summaryLineParses() {
        let s = ProcessStats.parseSummary("summary packets=10 state=9 bad=0 ignored=1 control=1 held=0 applied=8 writes=3 failsafes=0 sources=2 evicted=0")
        #expect(s["packets"] == 10)
        #expect(s["applied"] == 8)
        #expect(s.count == 11)
    }
}
