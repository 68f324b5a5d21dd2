#if canImport(Glibc)
import Glibc
#endif
import BoardFirmware
import BoardLink
import BoardProtocol
import BoardSimulator
import Foundation
import SerialTTY
import Synchronization
import SystemIO
import TestSupport
import Testing

@Suite(.serialized) struct BoardFaultTests {
    /// The overlap check the slow-board test relies on does fire: two commands written back to
    /// back to a 9600-baud board-sim show up as `overlap`.
    @Test func boardSimReportsAHostWithTwoCommandsOutstanding() throws {
        let dir = try TemporaryDirectory()
        let sim = try BoardSimProcess(["--baud", "9600", "--link", dir.path + "/board"])
        let port = try SerialPort.open(path: sim.path, baud: 9600)
        try port.writeAll("W 22 0101\n".bytes)
        try port.writeAll("W 22 0202\n".bytes)
        #expect(eventually { sim.commands.count == 2 })
        #expect(sim.overlaps == 1)
        #expect(sim.trace.firstIndex(of: "overlap") ?? 99 < sim.trace.firstIndex(of: "cmd W 22 0202") ?? 0)
    }

    /// With `--allow-write-behind-read`, one `W` right behind one unanswered `R` is allowed
    /// (Protocol.md §4.6 rule 8); a second read, a third line, or anything behind a `W` is an
    /// overlap. Without the flag, the `W` behind the `R` is one too. 9600 baud: every line is in
    /// before the first prompt is out.
    @Test(arguments: [
        (["R 07 0b", "W 0f 01"], true, 0), (["R 07 0b", "W 0f 01"], false, 1),
        (["R 07 0b", "R 07 0b"], true, 1), (["R 07 0b", "W 0f 01", "W 10 01"], true, 1),
        (["W 0f 01", "R 07 0b"], true, 1),
    ])
    func boardSimAllowsOneWriteBehindOneReadOnlyWhenToldAndNothingElse(lines: [String], allow: Bool, overlaps: Int) throws {
        let dir = try TemporaryDirectory()
        let sim = try BoardSimProcess(["--baud", "9600", "--link", dir.path + "/board"] + (allow ? ["--allow-write-behind-read"] : []))
        let port = try SerialPort.open(path: sim.path, baud: 9600)
        try port.writeAll(Array(lines.map { $0 + "\n" }.joined().utf8))
        #expect(eventually { sim.commands.count == lines.count })
        #expect(sim.commands == lines)
        #expect(sim.overlaps == overlaps, "\(sim.trace)")
    }

    /// The same while the board is still taking the read a byte at a time (1200 baud: 8 ms a
    /// byte): the `W` that follows is behind that read, not behind the rest of its line.
    @Test func aWriteBehindAReadTheBoardIsStillTakingIsAllowedWhenTold() throws {
        let dir = try TemporaryDirectory()
        let sim = try BoardSimProcess(["--baud", "1200", "--link", dir.path + "/board", "--allow-write-behind-read"])
        let port = try SerialPort.open(path: sim.path, baud: 1200)
        try port.writeAll(Array("R 07 0b\n".utf8))
        // The echo of its first character: the board has begun to take the line.
        var echo: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while !echo.contains(UInt8(ascii: "R")), ContinuousClock.now < deadline {
            _ = try Poller.wait(for: port.rawValue, events: .readable, timeout: .milliseconds(100))
            echo += (try? port.read()) ?? []
        }
        try port.writeAll(Array("W 0f 01\n".utf8))
        #expect(eventually { sim.commands.count == 2 })
        #expect(sim.commands == ["R 07 0b", "W 0f 01"])
        #expect(sim.overlaps == 0, "\(sim.trace)")
    }

    /// A board whose device stays open but which stops answering: after `unansweredLimit`
    /// silent commands it counts as gone, is reopened, and once it answers again it gets the
    /// safe state first.
    @Test func aBoardThatStopsAnsweringIsReopenedAndGetsTheSafeStateFirst() throws {
        let pty = try PseudoTerminal()
        let answering = Answering()
        let responder = Thread {
            var board = SimulatedBoard()
            _ = board.takeOutput()
            while !answering.stopped {
                _ = try? Poller.wait(for: pty.master.rawValue, events: .readable, timeout: .milliseconds(20))
                guard let bytes = try? pty.master.read(), !bytes.isEmpty else { continue }
                guard answering.on else { continue }   // a hung board: swallows everything
                let lines = board.receive(bytes)
                answering.record(lines.map { String(decoding: $0.text, as: UTF8.self) })
                try? pty.master.writeAll(board.takeOutput())
            }
        }
        responder.start()
        defer { answering.stop() }

        answering.on = false
        let events = EventLog<BoardEvent>()
        var options = BoardOptions()
        options.replyTimeout = .milliseconds(50)
        options.reconnectInterval = .milliseconds(50)
        let board = try BoardConnection(spec: .serial(path: pty.slavePath, baud: 115200), profile: .kit, options: options) { events.append($0) }
        defer { board.close() }
        board.setDesired([0x22: 0x30])
        #expect(eventually { events.all.contains { if case .disconnected(_, let r) = $0 { r.contains("stopped answering") } else { false } } })
        #expect(board.snapshot.commandsFailed >= 3)

        answering.clear()
        answering.on = true
        #expect(eventually { events.all.contains(.reconnected(device: "serial:\(pty.slavePath)")) })
        #expect(eventually { answering.lines.contains("W 22 30") })
        #expect(beginsWithSafeState(answering.lines), "\(answering.lines)")
    }
}

final class Answering: Sendable {
    private let state = Mutex<(on: Bool, stopped: Bool, lines: [String])>((true, false, []))
    var on: Bool {
        get { state.withLock { $0.on } }
        set { state.withLock { $0.on = newValue } }
    }
    var stopped: Bool { state.withLock { $0.stopped } }
    var lines: [String] { state.withLock { $0.lines } }
    func record(_ l: [String]) { state.withLock { $0.lines += l } }
    func clear() { state.withLock { $0.lines = [] } }
    func stop() { state.withLock { $0.stopped = true } }
}
