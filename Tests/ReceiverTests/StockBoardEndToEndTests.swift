#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// The built `receive` against the built `board-sim` with the kit's published firmware (the
/// stock profile: 34 bytes, no motors), and against the motors firmware, checked from the
/// board's side of the pseudo-terminal (its `cmd` and `map` trace lines).
@Suite(.serialized) struct StockBoardEndToEndTests {
    /// `analog-remote board-sim --trace --quiet …` on a `--link` path in a fresh directory.
    final class Sim {
        let child: ChildProcess
        let path: String

        init(_ arguments: [String], link: String) throws {
            child = try ChildProcess(analogRemote: ["board-sim", "--trace", "--quiet", "--link", link] + arguments)
            guard child.waitForOutput(timeout: .seconds(20), { out, _ in out.contains("\n") }) else {
                throw ReceiverTestError("board-sim did not start: \(child.stderr)")
            }
            path = link
        }

        var trace: [String] { child.stdout.split(separator: "\n").dropFirst().map(String.init) }
        var commands: [String] { trace.filter { $0.hasPrefix("cmd ") }.map { String($0.dropFirst(4)) } }
        var writes: [String] { commands.filter { $0.hasPrefix("W ") } }
        var maps: [[UInt8]] { trace.compactMap { $0.hasPrefix("map ") ? Hex.bytes($0.dropFirst(4)) : nil } }

        func waitForMap(timeout: Duration = .seconds(10), _ predicate: ([UInt8]) -> Bool) -> Bool {
            child.waitForOutput(timeout: timeout) { _, _ in maps.last.map(predicate) ?? false }
        }
        func waitForCommand(timeout: Duration = .seconds(10), _ predicate: @escaping (String) -> Bool) -> Bool {
            child.waitForOutput(timeout: timeout) { _, _ in commands.contains(where: predicate) }
        }
        deinit { child.stop() }
    }

    final class Directory {
        let path = NSTemporaryDirectory() + "analog-remote-stock-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Starts `receive` on `board`, waiting for its port (nil if it exited first).
    func receiver(_ board: String, _ arguments: [String] = []) throws -> (ChildProcess, UInt16?) {
        let p = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--board", board] + arguments)
        _ = p.waitForOutput(timeout: .seconds(20)) { out, _ in out.contains("\n") || !p.isRunning }
        let first = p.stdout.split(separator: "\n").first ?? ""
        return (p, first.hasPrefix("receiving on udp port ") ? UInt16(first.dropFirst("receiving on udp port ".count)) : nil)
    }

    /// The address and byte count of a `W aa dd…` line.
    static func span(_ write: String) -> (address: Int, count: Int)? {
        let parts = write.split(separator: " ")
        guard parts.count == 3, let a = Int(parts[1], radix: 16) else { return nil }
        return (a, parts[2].count / 2)
    }

    /// No `W` reaches past 0x21, the last byte of the stock firmware's map.
    static func nothingPastTheStockMap(_ writes: [String]) -> Bool {
        writes.allSatisfy { w in span(w).map { $0.address + $0.count - 1 <= 0x21 } ?? false }
    }

    static let stockSafeState = ["W 09 0000", "W 0f 0000", "W 12 000000"]

    /// The probe, then the profile's safe state as the first writes (read-backs between them).
    static func beginsWithProbeThenSafeState(_ commands: [String], _ safe: [String]) -> Bool {
        guard commands.first == "R 00 55" else { return false }
        let head = commands.drop { $0 == "R 00 55" }.prefix { safe.contains($0) || $0.hasPrefix("R ") }
        return Set(head.filter { $0.hasPrefix("W ") }) == Set(safe)
    }

    @Test func forwardTurnsAndButtonsOnTheStockBoardAreTheDocumentedWritesAndNothingPast0x21() throws {
        let dir = try Directory()
        let sim = try Sim([], link: dir.path + "/board")
        let (r, port) = try receiver("serial:\(sim.path)", ["--failsafe-ms", "5000"])
        defer { r.stop() }
        let c = try TestController(port: try #require(port, "receiver did not start: \(r.stderr)"))
        #expect(Self.beginsWithProbeThenSafeState(sim.commands, Self.stockSafeState) || sim.commands.count < 7)

        try c.send(.neutral)
        // Forward, level: both wheels +64 → both LEDs at 128; VAR1 = VAR2 = +64, VAR3 = forward.
        try c.send(ControllerState(angle: 0, buttons: .forward))
        #expect(sim.waitForMap { $0[0x0F] == 0x80 && $0[0x10] == 0x80 && $0[0x12] == 0x40 && $0[0x13] == 0x40 && $0[0x14] == 0x01 },
                "\(sim.commands)")
        #expect(sim.writes.contains("W 0f 8080") && sim.writes.contains("W 12 404001"), "\(sim.writes)")
        // Forward, full lock right: left 127 → LED1 254, right 0 → LED2 off.
        try c.send(ControllerState(angle: 0.7853982, buttons: .forward))
        #expect(sim.waitForMap { $0[0x0F] == 0xFE && $0[0x10] == 0 && $0[0x12] == 0x7F && $0[0x13] == 0 })
        // Left on the spot: left −64, right +64: both LEDs 128, the signs in the variables.
        try c.send(ControllerState(angle: -0.7853982, buttons: []))
        #expect(sim.waitForMap { $0[0x0F] == 0x80 && $0[0x10] == 0x80 && $0[0x12] == 0xC0 && $0[0x13] == 0x40 && $0[0x14] == 0 })
        // A = the horn: A4 for up to 2 s, silenced on release; B shows in VAR3 only.
        try c.send(.neutral)
        try c.send(ControllerState(angle: 0, buttons: .a))
        #expect(sim.waitForMap { $0[0x09] == 22 && $0[0x0A] == 125 && $0[0x14] == 0x04 })
        try c.send(ControllerState(angle: 0, buttons: [.a, .b]))
        #expect(sim.waitForMap { $0[0x14] == 0x0C })
        try c.send(ControllerState(angle: 0, buttons: .b))
        #expect(sim.waitForMap { $0[0x09] == 0 && $0[0x0A] == 0 && $0[0x14] == 0x08 })
        try c.send(.neutral)
        #expect(sim.waitForMap { $0[0x14] == 0 && $0[0x0F] == 0 && $0[0x10] == 0 })

        // The buzzer bytes are written only when the horn changes: the safe state, on, off.
        let buzzer = sim.writes.filter { Self.span($0).map { $0.address <= 0x0A && $0.address + $0.count > 0x09 } ?? false }
        #expect(buzzer == ["W 09 0000", "W 09 167d", "W 09 0000"], "\(sim.writes)")
        #expect(Self.nothingPastTheStockMap(sim.writes), "a write past 0x21: \(sim.writes)")
        #expect(sim.maps.allSatisfy { $0.count == 34 })
        r.signal(SIGTERM)
        #expect(r.wait() == 0)
    }

    /// Failsafe (silence) and SIGTERM on the stock board: the drive's LEDs and variables go to
    /// 0; on exit the board is left in the stock safe state.
    @Test func failsafeAndSIGTERMLeaveTheStockBoardInItsSafeState() throws {
        let dir = try Directory()
        let sim = try Sim([], link: dir.path + "/board")
        let (r, port) = try receiver("serial:\(sim.path)", ["--failsafe-ms", "300"])
        defer { r.stop() }
        let c = try TestController(port: try #require(port, "\(r.stderr)"))
        try c.send(.neutral)
        try c.send(ControllerState(angle: 0, buttons: [.forward, .a]))
        #expect(sim.waitForMap { $0[0x0F] == 0x80 && $0[0x12] == 0x40 && $0[0x09] == 22 })
        // Silence: the failsafe stops the drive (LEDs 0, VAR1–VAR3 0); the horn keeps its
        // bounded tone (a bound output, Protocol.md §3.3).
        #expect(sim.waitForMap { $0[0x0F] == 0 && $0[0x10] == 0 && $0[0x12] == 0 && $0[0x13] == 0 && $0[0x14] == 0 })
        try c.send(.neutral)
        try c.send(ControllerState(angle: 0, buttons: [.forward, .a]))
        #expect(sim.waitForMap { $0[0x0F] == 0x80 && $0[0x12] == 0x40 })
        r.signal(SIGTERM)
        #expect(r.wait() == 0)
        let last = try #require(sim.maps.last)
        for (address, value) in [0x09: 0, 0x0A: 0, 0x0F: 0, 0x10: 0, 0x12: 0, 0x13: 0, 0x14: 0] as [Int: UInt8] {
            #expect(last[address] == value, "0x\(String(address, radix: 16)) left at \(last[address])")
        }
        #expect(Self.nothingPastTheStockMap(sim.writes))
    }

    /// A mapping that writes 0x22 (the motors profile's) is refused on a stock board with one
    /// line naming the address, the map size and what to do, exit 2, after only the board's
    /// own safe state; the same mapping drives a motors board.
    @Test func aMappingThatWrites0x22IsRefusedOnAStockBoardAndAcceptedOnAMotorsBoard() throws {
        let dir = try Directory()
        let file = dir.path + "/motors.toml"
        try "[drive.left]\naddress = 0x22\ninvert = true\n[drive.right]\naddress = 0x23\n".write(toFile: file, atomically: true, encoding: .utf8)

        let stock = try Sim([], link: dir.path + "/stock")
        let (refused, port) = try receiver("serial:\(stock.path)", ["--map", file])
        #expect(port == nil)
        #expect(refused.wait() == 2)
        #expect(refused.waitForOutput { _, err in err.hasSuffix("\n") })
        let lines = refused.stderr.split(separator: "\n").filter { !$0.hasPrefix("notice:") && !$0.hasPrefix("info:") }
        #expect(lines.count == 1, "\(refused.stderr)")
        let line = String(lines.first ?? "")
        for part in ["0x22", "34 bytes", "0x00–0x21", "--profile stock"] { #expect(line.contains(part), "\(line) lacks \(part)") }
        #expect(line.hasPrefix("analog-remote: serial:\(stock.path): drive.left.address writes 0x22"), "\(line)")
        #expect(Self.beginsWithProbeThenSafeState(stock.commands, Self.stockSafeState), "\(stock.commands)")
        #expect(Self.nothingPastTheStockMap(stock.writes), "\(stock.writes)")

        let motors = try Sim(["--firmware", "motors"], link: dir.path + "/motors")
        let (accepted, motorsPort) = try receiver("serial:\(motors.path)", ["--map", file])
        defer { accepted.stop() }
        let c = try TestController(port: try #require(motorsPort, "\(accepted.stderr)"))
        try c.send(.neutral)
        try c.send(ControllerState(angle: 0, buttons: .forward))
        #expect(motors.waitForCommand { $0 == "W 22 c040" }, "\(motors.commands)")

        // --profile motors on the stock board: the same refusal.
        let (forced, _) = try receiver("serial:\(stock.path)", ["--profile", "motors"])
        #expect(forced.wait() == 2)
        #expect(forced.waitForOutput { _, err in err.contains("writes 0x22") && err.contains("34 bytes") })
    }

    /// A board that acknowledges a write and drops it: the read-back right after that write
    /// finds it, the receiver reports it in one line and exits 2 (at start).
    @Test func aBoardThatDropsAWriteIsReportedByTheNextCommand() throws {
        let dir = try Directory()
        let sim = try Sim(["--drop-writes", "0x10"], link: dir.path + "/board")
        let (r, port) = try receiver("serial:\(sim.path)")
        #expect(port == nil)
        #expect(r.wait() == 2)
        #expect(r.waitForOutput { _, err in err.contains("dropped a write") })
        #expect(r.stderr.contains("0x10 was written 00 but reads back ff"), "\(r.stderr)")
        let commands = sim.commands
        let at = try #require(commands.firstIndex(of: "W 0f 0000"), "\(commands)")
        #expect(commands[at + 1] == "R 0f 02", "the read-back is the very next command: \(commands)")
        // After the refusal: the rest of the safe state (and the dropped byte once more), no
        // read-back, nothing of the drive.
        #expect(Set(commands.dropFirst(at + 2)).isSubset(of: ["W 12 000000", "W 10 00"]), "\(commands)")
    }

    /// The receiver started on a motors board; the board is replaced by a stock one at the same
    /// path: safe state of the stock board, failsafe, one line, and it waits (no drive writes).
    @Test func reconnectingToADifferentBoardIsRefusedAfterItsSafeState() throws {
        let dir = try Directory()
        let link = dir.path + "/board"
        var first: Sim? = try Sim(["--firmware", "motors"], link: link)
        let (r, port) = try receiver("serial:\(link)", ["--failsafe-ms", "5000"])
        defer { r.stop() }
        let c = try TestController(port: try #require(port, "\(r.stderr)"))
        try c.send(.neutral)
        try c.send(ControllerState(angle: 0, buttons: .forward))
        #expect(first?.waitForCommand { $0 == "W 22 c040" } == true)
        if let pid = first?.child.pid { kill(pid, SIGKILL) }
        _ = first?.child.wait()
        first = nil
        #expect(r.waitForOutput { _, err in err.contains("board lost") })
        let second = try Sim([], link: link)
        #expect(r.waitForOutput { _, err in err.contains("board refused") && err.contains("restart the receiver") }, "\(r.stderr)")
        for _ in 0..<5 { try c.send(ControllerState(angle: 0, buttons: .forward)) }
        try c.send(.neutral)
        try c.send(ControllerState(angle: 0, buttons: .forward))
        #expect(second.waitForCommand { $0 == "W 12 000000" })
        usleep(300_000)
        #expect(Self.beginsWithProbeThenSafeState(second.commands, Self.stockSafeState), "\(second.commands)")
        #expect(Set(second.writes).isSubset(of: Set(Self.stockSafeState)), "only the safe state: \(second.writes)")
        #expect(r.isRunning, "it waits")
    }

    /// The start-up line names the profile, the firmware's id and version and the map size.
    @Test func theStartUpLineNamesProfileFirmwareAndMapSize() throws {
        let dir = try Directory()
        let sim = try Sim([], link: dir.path + "/board")
        let p = try ChildProcess(analogRemote: ["receive", "--no-advertise", "--port", "0", "--board", "serial:\(sim.path)"])
        defer { p.stop() }
        #expect(p.waitForOutput { _, err in err.contains("board: stock profile, stock firmware 1.1, 34-byte map (product 1, version 1)") },
                "\(p.stderr)")
    }
}
