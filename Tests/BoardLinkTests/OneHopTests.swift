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

/// One hop: the thread that calls `setDesired` writes the line itself when the link is idle;
/// the connection's thread reads every reply and takes over while one is awaited or the device
/// is down. The board here is a pty whose other side the test drives itself (``ManualBoard``),
/// and a reference (``WriterModel``: the writer, the session and the simulated firmware in lock
/// step) says which lines the writer's rules give.
@Suite(.serialized) struct OneHopTests {
    /// Generous: the board here always answers, and a loaded machine must not turn a slow test
    /// thread into a timeout (which would repeat a command and change the transcript).
    static var patient: BoardOptions {
        var o = BoardOptions()
        o.replyTimeout = .seconds(5)
        o.reconnectInterval = .milliseconds(50)
        // The transcript is the writer's: no sensor reads in it.
        o.sensorRate = 0
        return o
    }

    static let steps: [[UInt8: UInt8]] = [
        [0x22: 0x10, 0x23: 0xF0], [0x0F: 100], [0x22: 0x20], [0x22: 0x30, 0x23: 0x30, 0x0F: 0], [0x10: 5, 0x0F: 7],
    ]

    @Test func theCallersThreadWritesTheSameLinesInTheSameOrderAsTheWritersRules() throws {
        let board = try ManualBoard()
        defer { board.close() }
        var model = WriterModel()
        let link = try BoardConnection(spec: .serial(path: board.path, baud: 115200), profile: .kit, options: Self.patient)
        defer { link.close() }
        var expected = model.settle()
        #expect(expected.first == BoardIdentity.probe.text)
        for line in expected { #expect(try board.exchange() == line) }
        #expect(eventually { link.snapshot.profile != nil && !link.snapshot.awaitingReply })
        for step in Self.steps {
            let lines = model.set(step)
            expected += lines
            let sent = link.snapshot.commandsSent
            link.setDesired(step)
            // Written before setDesired returned, by this thread: nothing else ran in between.
            let after = link.snapshot
            #expect(after.commandsSent == sent + 1 && after.awaitingReply, "\(after)")
            for line in lines { #expect(try board.exchange() == line) }
            #expect(eventually { !link.snapshot.awaitingReply })
        }
        #expect(board.lines == expected)
        #expect(board.wire == Array(expected.map { $0 + "\n" }.joined().utf8))
        #expect(link.snapshot.commandsFailed == 0 && link.snapshot.lastError == nil)
    }

    @Test func aReplyAwaitedMakesTheNextWriteWaitAndTheLatestValueWins() throws {
        let board = try ManualBoard()
        defer { board.close() }
        var model = WriterModel()
        let link = try BoardConnection(spec: .serial(path: board.path, baud: 115200), profile: .kit, options: Self.patient)
        defer { link.close() }
        for line in model.settle() { #expect(try board.exchange() == line) }
        #expect(eventually { link.snapshot.profile != nil && !link.snapshot.awaitingReply })
        link.setDesired([0x22: 0x05, 0x23: 0x05])
        for line in model.set([0x22: 0x05, 0x23: 0x05]) { #expect(try board.exchange() == line) }
        #expect(eventually { link.snapshot.confirmed[0x22] == 0x05 && !link.snapshot.awaitingReply })

        link.setDesired([0x22: 0x01])
        let sent = link.snapshot.commandsSent
        #expect(try board.receiveLine() == "W 22 01")
        link.setDesired([0x22: 0x02])
        link.setDesired([0x22: 0x03, 0x23: 0x04])
        let waiting = link.snapshot
        #expect(waiting.awaitingReply && waiting.commandsSent == sent, "nothing more on the wire while the reply is awaited: \(waiting)")
        try board.reply()
        // The connection's thread reads the reply and sends the latest values, merged.
        #expect(try board.exchange() == "W 22 0304")
        #expect(eventually { link.snapshot.confirmed[0x22] == 0x03 && !link.snapshot.awaitingReply })
        #expect(!board.lines.contains("W 22 02"))
    }

    /// The device hangs up while the caller keeps writing: the fault is handled once (one
    /// `disconnected`, whichever thread met it), nothing is written meanwhile, and the board
    /// that comes back gets the probe and the safe state before the values set during the outage.
    @Test func aHangUpIsHandledOnceAndTheBoardThatComesBackGetsTheSafeStateFirst() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path + "/board"
        let first = try ManualBoard()
        defer { first.close() }
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: first.path)
        var model = WriterModel()
        let events = EventLog<BoardEvent>()
        let link = try BoardConnection(spec: .serial(path: path, baud: 115200), profile: .kit, options: Self.patient) { events.append($0) }
        defer { link.close() }
        for line in model.settle() { #expect(try first.exchange() == line) }
        let drive: [UInt8: UInt8] = [0x22: 0x30, 0x23: 0x30]
        link.setDesired(drive)
        for line in model.set(drive) { #expect(try first.exchange() == line) }
        #expect(eventually { link.snapshot.confirmed[0x23] == 0x30 && !link.snapshot.awaitingReply })

        // The next board is ready before this one goes: a reopen never finds another test's pty.
        let second = try ManualBoard()
        defer { second.close() }
        first.close()
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: second.path)
        // Both threads meet the hang-up: this one writing, the connection's in poll.
        var value: UInt8 = 0x40
        #expect(eventually {
            link.setDesired([0x22: value])
            value = value == 0x40 ? 0x41 : 0x40
            return !link.snapshot.isConnected
        })
        link.setDesired([0x22: 0x40])
        #expect(eventually { events.all.count >= 2 })
        #expect(link.snapshot.disconnections == 1)

        _ = model.set([0x22: 0x40])
        let again = model.reconnect()
        for line in again { #expect(try second.exchange() == line) }
        #expect(beginsWithSafeState(second.lines), "\(second.lines)")
        #expect(second.lines.contains("W 22 4030"), "the values set during the outage follow: \(second.lines)")
        #expect(eventually { link.snapshot.confirmed[0x22] == 0x40 && !link.snapshot.awaitingReply })
        let device = "serial:\(path)"
        #expect(eventually { events.all.count == 3 })
        let all = events.all
        #expect(all.count == 3 && all[0] == .connected(device: device) && all[2] == .reconnected(device: device), "\(all)")
        if case .disconnected? = all.dropFirst().first {} else { Issue.record("expected one disconnected event: \(all)") }
        #expect(link.snapshot.disconnections == 1)
    }

    /// The caller's thread writes as fast as it can while the connection's thread handles the
    /// replies and sends what waited: every byte on the pty belongs to one whole, well-formed
    /// line, one command at a time, and the last values win.
    @Test func twoThreadsWritingNeverInterleaveBytes() throws {
        let pty = try PseudoTerminal()
        let responder = Responder(pty: pty)
        responder.start()
        defer { responder.stop(); pty.close() }
        let link = try BoardConnection(spec: .serial(path: pty.slavePath, baud: 115200), profile: .kit, options: Self.patient)
        defer { link.close() }
        #expect(link.waitUntilIdentified(timeout: .seconds(10))?.profile == .kit)
        var last: (UInt8, UInt8, UInt8) = (0, 0, 0)
        // Until both threads have written plenty: the caller's when it finds the link idle,
        // the connection's after each reply that found new values waiting.
        var i = 0
        while i < 2_000_000, i % 64 != 0 || link.snapshot.commandsSent < 600 {
            last = (UInt8(truncatingIfNeeded: i), UInt8(truncatingIfNeeded: i &* 7), UInt8(truncatingIfNeeded: i / 3))
            link.setDesired(i % 5 == 0 ? [0x0F: last.2, 0x10: last.2] : [0x22: last.0, 0x23: last.1])
            i += 1
        }
        link.setDesired([0x0F: last.2, 0x10: last.2, 0x22: last.0, 0x23: last.1])
        #expect(eventually {
            let c = link.snapshot.confirmed
            return c[0x22] == last.0 && c[0x23] == last.1 && c[0x0F] == last.2 && c[0x10] == last.2 && !link.snapshot.awaitingReply
        })
        let s = link.snapshot
        let (wire, lines, overlaps) = responder.result
        #expect(s.commandsFailed == 0 && s.lastError == nil, "\(s)")
        #expect(overlaps == 0, "a line arrived before the previous one was answered")
        #expect(lines.count == s.commandsSent && lines.count >= 600, "\(lines.count) lines, \(s.commandsSent) sent")
        #expect(wire.last == UInt8(ascii: "\n"))
        for line in lines {
            let command = BoardCommand.interpret(firmwareLine: Array((line + "\n").utf8))
            #expect(command?.text == line, "not a whole line as the host formats it: \(line)")
        }
    }
}

/// The lines the writer's rules give, from the writer, the session and the simulated firmware
/// run in lock step (each command answered before the next): the transcript a link that always
/// finds the board answered must write.
struct WriterModel {
    var writer = MemoryMapWriter(profile: .kit, verifies: true)
    var session = BoardSession()
    var sim = SimulatedBoard(profile: .kit)

    init() {
        _ = sim.takeOutput()
        writer.connected()
    }

    /// Commands until the writer has nothing more to send.
    mutating func settle() -> [String] {
        var lines: [String] = []
        let now = ContinuousClock.now
        while let command = writer.nextCommand() {
            sim.receive(session.start(command, now: now))
            lines.append(command.text)
            for event in session.receive(sim.takeOutput(), now: now) {
                switch event {
                case .completed(_, let response):
                    if case .identified? = writer.completed(response) { writer.identified(profile: .kit) }
                case .failed, .noise:
                    Issue.record("the model's board failed: \(event)")
                }
            }
        }
        return lines
    }

    mutating func set(_ values: [UInt8: UInt8]) -> [String] {
        writer.setDesired(values)
        return settle()
    }

    /// A new board on the same device (the desired values kept).
    mutating func reconnect() -> [String] {
        writer.disconnected()
        writer.connected()
        session.reset()
        sim = SimulatedBoard(profile: .kit)
        _ = sim.takeOutput()
        return settle()
    }
}

/// The board side of a pty, driven by the test's thread: it reads one line at a time, feeds it
/// to the simulated firmware and writes the answer when told. With MIDI framing a line is one
/// SysEx (`F0 … \n F7`) and the answer note pairs, as `midi-serial:` carries them.
final class ManualBoard {
    let pty: PseudoTerminal
    let framing: SimulatedBoard.Framing
    private var sim: SimulatedBoard
    private var buffer: [UInt8] = []
    private(set) var wire: [UInt8] = []
    private(set) var lines: [String] = []
    private var closed = false

    init(framing: SimulatedBoard.Framing = .text) throws {
        pty = try PseudoTerminal()
        self.framing = framing
        sim = SimulatedBoard(profile: .kit, framing: framing)
        _ = sim.takeOutput()
    }

    var path: String { pty.slavePath }

    /// The next line the host wrote (waiting for it), fed to the firmware but not answered yet.
    func receiveLine(timeout: Duration = .seconds(10)) throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let end = buffer.firstIndex(of: framing == .text ? UInt8(ascii: "\n") : 0xF7) {
                let line = Array(buffer[...end])
                buffer.removeSubrange(...end)
                sim.receive(line)
                let body = framing == .text ? line.dropLast() : line.drop { $0 == 0xF0 }.dropLast().dropLast()
                let text = String(decoding: body, as: UTF8.self)
                lines.append(text)
                return text
            }
            guard ContinuousClock.now < deadline else { return nil }
            _ = try Poller.wait([(pty.master.rawValue, .readable)], until: deadline)
            if let bytes = try pty.master.read(), !bytes.isEmpty {
                wire += bytes
                buffer += bytes
            }
        }
    }

    /// Writes what the firmware printed for the lines received so far.
    func reply() throws {
        try pty.master.writeAll(sim.takeOutput())
    }

    func exchange() throws -> String? {
        let line = try receiveLine()
        try reply()
        return line
    }

    func close() {
        guard !closed else { return }
        closed = true
        pty.close()
    }
}

/// Answers every line at once on its own thread, keeping every byte the host wrote; counts a
/// line that arrived while the previous one was still unanswered.
final class Responder: Sendable {
    private let pty: PseudoTerminal
    private let state = Mutex<(stopped: Bool, wire: [UInt8], lines: [String], overlaps: Int)>((false, [], [], 0))

    init(pty: PseudoTerminal) { self.pty = pty }

    func start() {
        Thread { [self] in
            var board = SimulatedBoard(profile: .kit)
            _ = board.takeOutput()
            var pending: [UInt8] = []
            while !state.withLock({ $0.stopped }) {
                _ = try? Poller.wait(for: pty.master.rawValue, events: .readable, timeout: .milliseconds(20))
                guard let bytes = try? pty.master.read(), !bytes.isEmpty else { continue }
                pending += bytes
                var complete: [String] = []
                while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    complete.append(String(decoding: pending[..<end], as: UTF8.self))
                    pending.removeSubrange(...end)
                }
                board.receive(bytes)
                state.withLock { s in
                    s.wire += bytes
                    s.lines += complete
                    if complete.count > 1 { s.overlaps += complete.count - 1 }
                }
                try? pty.master.writeAll(board.takeOutput())
            }
        }.start()
    }

    func stop() { state.withLock { $0.stopped = true } }
    var result: (wire: [UInt8], lines: [String], overlaps: Int) { state.withLock { ($0.wire, $0.lines, $0.overlaps) } }
}
