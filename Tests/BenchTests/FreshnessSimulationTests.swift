@testable import Bench
import BoardProtocol
import BoardSimulator
import Testing

/// The discrete-event simulation behind item 5: exact where the arithmetic is exact, and the
/// FIFO-versus-conflation behaviour pinned with bounds derived from the link's capacity.
@Suite struct FreshnessSimulationTests {
    static func byteTime(_ baud: Int) -> Int64 { FreshnessSimulation.nanoseconds(WireTiming(baud: baud).byteTime) }

    /// One `W 22 xxyy\n` (10 bytes): the board echoes each byte as it arrives (one byte-time
    /// behind), then `\r\n` and the prompt `\r\n>`: 15 bytes back, the last one at 16 byte-times.
    @Test(arguments: [9600, 115_200])
    func aLoneCommandCompletesAfterSixteenByteTimes(baud: Int) throws {
        for r in [FreshnessSimulation.run(ConflatingWriter(), baud: baud, inputPeriod: 1_000_000_000, count: 1),
                  FreshnessSimulation.run(FIFOWriter(), baud: baud, inputPeriod: 1_000_000_000, count: 1)] {
            #expect(r.completed == 1)
            #expect(r.queuedAtEnd == 0)
            #expect(r.ages == [16 * Self.byteTime(baud)])
        }
    }

    /// Below the link's capacity (115200 baud: 1.4 ms a command, input every 10 ms) nothing
    /// queues: both writers send every state and report the same ages.
    @Test func belowCapacityBothWritersAreTheSame() {
        let c = FreshnessSimulation.run(ConflatingWriter(), baud: 115_200, inputPeriod: 10_000_000, count: 200)
        let f = FreshnessSimulation.run(FIFOWriter(), baud: 115_200, inputPeriod: 10_000_000, count: 200)
        #expect(c.completed == 200)
        #expect(c.ages == f.ages)
        #expect(c.skipped == 0 && f.skipped == 0)
        #expect(Set(c.ages) == [16 * Self.byteTime(115_200)])
    }

    /// Above it (9600 baud: 16.7 ms a command, input every 10 ms) the FIFO's age grows with
    /// every state: after n states it is about n·(16.7 − 10) ms. The conflating writer's age
    /// stays under one input period plus two commands, and it skips the states it overwrote.
    @Test func aboveCapacityFIFOAgeGrowsAndConflationStaysBounded() throws {
        let period: Int64 = 10_000_000, count = 300
        let command = 16 * Self.byteTime(9600)
        let c = FreshnessSimulation.run(ConflatingWriter(), baud: 9600, inputPeriod: period, count: count)
        let f = FreshnessSimulation.run(FIFOWriter(), baud: 9600, inputPeriod: period, count: count)

        // The link completes one command per 16 byte-times, whatever the writer.
        let capacity = Int(Int64(count) * period / command)
        #expect(abs(c.completed - capacity) <= 1)
        #expect(abs(f.completed - capacity) <= 1)

        // Conflation: every state is sent or overwritten, bounded age.
        #expect(c.completed + c.skipped + c.queuedAtEnd == count)
        #expect(c.skipped > 0)
        #expect(try #require(c.ages.max()) <= period + 2 * command)

        // FIFO: nothing skipped, the rest still queued, ages non-decreasing and the last one
        // about (states completed)·(command − period) old.
        #expect(f.skipped == 0)
        #expect(f.completed + f.queuedAtEnd == count)
        #expect(zip(f.ages, f.ages.dropFirst()).allSatisfy { $0 <= $1 })
        let last = try #require(f.ages.last)
        let expected = Int64(f.completed - 1) * (command - period) + command
        #expect(abs(last - expected) <= period)
        #expect(try #require(f.age).p99 > 10 * (try #require(c.age).p99))
    }

    @Test func fifoWriterSendsEveryStateInOrder() {
        var w = FIFOWriter()
        for k in 0..<5 { w.setDesired(FreshnessSimulation.values(k), at: Int64(k)) }
        var sent: [Int64] = []
        while let (command, time) = w.nextCommand() {
            guard case let .write(address, bytes) = command else { Issue.record("not a write"); return }
            #expect(address == MemoryMapProfile.kit.motorLeft)
            #expect(bytes.count == 2)
            sent.append(time ?? -1)
            w.succeeded()
        }
        #expect(sent == [0, 1, 2, 3, 4])
    }

    @Test func conflatingWriterSendsOnlyTheLatestOfStatesThatArrivedWhileBusy() throws {
        var w = ConflatingWriter()
        w.setDesired(FreshnessSimulation.values(1), at: 10)
        let firstNext = w.nextCommand()
        let (first, t1) = try #require(firstNext)
        #expect(t1 == 10)
        for k in 2...4 { w.setDesired(FreshnessSimulation.values(k), at: Int64(k * 10)) }
        #expect(w.nextCommand() == nil)   // one command outstanding
        w.succeeded()
        let secondNext = w.nextCommand()
        let (second, t2) = try #require(secondNext)
        #expect(t2 == 40)
        #expect(w.skipped == 2)
        let latest = FreshnessSimulation.values(4)
        let left = try #require(MemoryMapProfile.kit.motorLeft), right = try #require(MemoryMapProfile.kit.motorRight)
        #expect(second == .write(address: left, bytes: [latest[left]!, latest[right]!]))
        #expect(first != second)
    }
}

