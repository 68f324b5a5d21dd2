import BoardProtocol
import TestSupport
import Testing

@Suite struct BoardSessionTests {
    let t0 = ContinuousClock.now
    func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }

    @Test func oneCommandCompletesWithItsParsedResponse() {
        var s = BoardSession(replyTimeout: .milliseconds(100))
        let bytes = s.start(.read(address: 0x0F, count: 2), now: at(0))
        #expect(bytes == "R 0f 02\n".bytes)
        #expect(!s.isIdle && s.deadline == at(100))
        let events = s.receive("R 0f 02\n\r\n64 c8 \r\n>".bytes, now: at(5))
        #expect(events == [.completed(.read(address: 0x0F, count: 2), .values([0x64, 0xC8]))])
        #expect(s.isIdle && s.deadline == nil)
    }

    @Test func theTimeoutCountsFromTheLastByteReceived() {
        var s = BoardSession(replyTimeout: .milliseconds(100))
        let command = BoardCommand.write(address: 0x22, bytes: [0, 0])
        _ = s.start(command, now: at(0))
        #expect(s.receive("W 22".bytes, now: at(90)).isEmpty)
        #expect(s.checkTimeout(now: at(150)).isEmpty, "bytes are still coming: a slow board is not timed out")
        let timedOut = s.checkTimeout(now: at(190)).first
        #expect(timedOut == .failed(command, BoardSessionError(.timeout, command: command, bytes: "W 22".bytes, timeout: .milliseconds(100))))
        #expect(s.isIdle && s.consecutiveTimeouts == 1)
        if case .failed(_, let e) = timedOut {
            #expect(e.description == #"no reply to "W 22 0000" within 100 ms of silence (received "W 22")"#)
        }
    }

    @Test func aLateReplyIsNoiseAndDoesNotCompleteTheNextCommand() {
        var s = BoardSession(replyTimeout: .milliseconds(100))
        let first = BoardCommand.write(address: 0x22, bytes: [1, 1])
        let second = BoardCommand.write(address: 0x22, bytes: [2, 2])
        _ = s.start(first, now: at(0))
        _ = s.checkTimeout(now: at(100))
        _ = s.start(second, now: at(101))
        let events = s.receive("W 22 0101\n\r\n\r\n>W 22 0202\n\r\n\r\n>".bytes, now: at(110))
        #expect(events.count == 2)
        if case .noise(let e) = events[0] { #expect(e.kind == .unexpectedFrame) } else { Issue.record("\(events)") }
        #expect(events[1] == .completed(second, .done))
        #expect(s.consecutiveTimeouts == 0)
    }

    @Test func aRejectedOrMismatchedReplyFailsTheCommand() {
        var s = BoardSession()
        let w = BoardCommand.write(address: 0, bytes: [1])
        _ = s.start(w, now: at(0))
        let rejected = s.receive("W 00 01\n\r\nerror:undefined cmd or fmt.\r\n\r\n>".bytes, now: at(1))
        #expect(rejected == [.failed(w, BoardSessionError(.rejected, command: w, bytes: BoardResponse.undefinedCommandBody))])
        _ = s.start(w, now: at(2))
        let odd = s.receive("W 00 01\n\r\n01 \r\n>".bytes, now: at(3))
        #expect(odd == [.failed(w, BoardSessionError(.unexpectedResponse, command: w, bytes: "01 ".bytes))])
    }

    @Test func aReadPastTheMapIsAnEmptyList() {
        var s = BoardSession()
        let r = BoardCommand.read(address: 0x30, count: 2)
        _ = s.start(r, now: at(0))
        #expect(s.receive("R 30 02\n\r\n\r\n>".bytes, now: at(1)) == [.completed(r, .values([]))])
    }

    @Test func resetForgetsTheCommandInFlight() {
        var s = BoardSession()
        _ = s.start(.flash, now: at(0))
        _ = s.receive("F\n".bytes, now: at(1))
        s.reset()
        #expect(s.isIdle)
        _ = s.start(.flash, now: at(2))
        #expect(s.receive("F\n\r\nflash memmap.\r\n\r\n>".bytes, now: at(3)) == [.completed(.flash, .flashed)])
    }

    // MARK: a write behind a read

    @Test func aWriteBehindAReadCompletesAfterItInOrder() {
        var s = BoardSession(replyTimeout: .milliseconds(100))
        let read = BoardCommand.read(address: 0x07, count: 0x0B)
        let write = BoardCommand.write(address: 0x0F, bytes: [0x64])
        #expect(s.start(read, now: at(0)) == "R 07 0b\n".bytes)
        #expect(s.canStart(write))
        #expect(s.start(write, now: at(3)) == "W 0f 64\n".bytes)
        #expect(s.inFlight == [read, write] && s.deadline == at(103))
        // The firmware answers both in one pass, in order; the read's reply may end mid-chunk.
        let readReply = "R 07 0b\n\r\nfd 2d 00 00 0a 14 1e ff 00 00 01 \r\n>".bytes
        let writeReply = "W 0f 64\n\r\n\r\n>".bytes
        let first = s.receive(readReply + writeReply.prefix(4), now: at(5))
        #expect(first == [.completed(read, .values([0xFD, 0x2D, 0, 0, 0x0A, 0x14, 0x1E, 0xFF, 0, 0, 1]))])
        #expect(s.inFlight == [write] && !s.isIdle && s.deadline == at(105))
        #expect(s.receive(writeReply.dropFirst(4), now: at(6)) == [.completed(write, .done)])
        #expect(s.isIdle && s.deadline == nil)
    }

    @Test func aTimeoutFailsEveryCommandInFlightOldestFirst() {
        var s = BoardSession(replyTimeout: .milliseconds(100))
        let read = BoardCommand.read(address: 0x07, count: 0x0B)
        let write = BoardCommand.write(address: 0x22, bytes: [1, 1])
        _ = s.start(read, now: at(0))
        _ = s.start(write, now: at(10))
        #expect(s.receive("R 07".bytes, now: at(20)).isEmpty)
        #expect(s.checkTimeout(now: at(119)).isEmpty)
        let failed = s.checkTimeout(now: at(120))
        #expect(failed == [
            .failed(read, BoardSessionError(.timeout, command: read, bytes: "R 07".bytes, timeout: .milliseconds(100))),
            .failed(write, BoardSessionError(.timeout, command: write, bytes: [], timeout: .milliseconds(100))),
        ])
        #expect(s.isIdle && s.deadline == nil && s.consecutiveTimeouts == 1, "one silence, one timeout")
        // The late replies are noise; a new command decodes.
        _ = s.start(.flash, now: at(130))
        let late = s.receive(" 0b\n\r\n00 \r\n>W 22 0101\n\r\n\r\n>F\n\r\nflash memmap.\r\n\r\n>".bytes, now: at(131))
        #expect(late.count == 3 && late.last == .completed(.flash, .flashed), "\(late)")
    }

    @Test func onlyOneWriteMayGoBehindOneRead() {
        let read = BoardCommand.read(address: 0x07, count: 0x0B)
        let write = BoardCommand.write(address: 0x0F, bytes: [1])
        var s = BoardSession()
        #expect(s.canStart(read) && s.canStart(write) && s.canStart(.flash))
        _ = s.start(write, now: at(0))
        #expect(!s.canStart(read) && !s.canStart(write), "nothing behind a W")
        s.reset()
        _ = s.start(read, now: at(0))
        #expect(!s.canStart(read), "never two reads")
        #expect(!s.canStart(.eepromWrite(address: 0, bytes: [1])) && !s.canStart(.flash) && !s.canStart(.eepromRead(address: 0, count: 1)))
        _ = s.start(write, now: at(1))
        #expect(!s.canStart(write) && !s.canStart(read), "never more than two")
        s.reset()
        #expect(s.isIdle && s.canStart(write))
        _ = s.start(.eepromRead(address: 0, count: 1), now: at(0))
        #expect(!s.canStart(write), "only an R, not a G")
    }

    @Test func startingAShapeThatIsNotAllowedTraps() async {
        await #expect(processExitsWith: .failure) {
            var s = BoardSession()
            _ = s.start(.write(address: 0x0F, bytes: [1]), now: .now)
            _ = s.start(.read(address: 0x07, count: 0x0B), now: .now)
        }
        await #expect(processExitsWith: .failure) {
            var s = BoardSession()
            _ = s.start(.read(address: 0x07, count: 0x0B), now: .now)
            _ = s.start(.write(address: 0x0F, bytes: [1]), now: .now)
            _ = s.start(.write(address: 0x10, bytes: [1]), now: .now)
        }
    }
}
