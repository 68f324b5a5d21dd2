import Foundation
import TestSupport
import Testing

/// `analog-remote rest`: the board of a receiver that died without stopping (SIGKILL) is left
/// at rest by a second process reading the receiver's config; a board a live receiver drives
/// is not touched; bad input is one line and a documented exit status.
@Suite(.serialized) struct RestEndToEndTests {
    final class Directory {
        let path = NSTemporaryDirectory() + "analog-remote-rest-\(UUID().uuidString)"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        func file(_ name: String, _ text: String) throws -> String {
            let p = "\(path)/\(name)"
            try text.write(toFile: p, atomically: true, encoding: .utf8)
            return p
        }
    }

    /// board-sim with the motors firmware on a link in `dir`.
    static func boardSim(_ dir: Directory) throws -> (sim: ChildProcess, link: String) {
        let link = "\(dir.path)/board"
        let sim = try ChildProcess(analogRemote: ["board-sim", "--trace", "--quiet", "--firmware", "motors", "--link", link])
        guard sim.waitForOutput(timeout: .seconds(20), { out, _ in out.contains("\n") }) else {
            throw RestTestError("board-sim did not start: \(sim.stderr)")
        }
        return (sim, link)
    }

    /// The motor bytes (0x22, 0x23) of board-sim's last map, as hex ("c040").
    static func motors(_ sim: ChildProcess) -> String? {
        sim.stdout.split(separator: "\n").last { $0.hasPrefix("map ") }.map { String($0.dropFirst(4).dropFirst(0x22 * 2).prefix(4)) }
    }

    /// The LED bytes (0x0f, 0x10) of board-sim's last map.
    static func leds(_ sim: ChildProcess) -> String? {
        sim.stdout.split(separator: "\n").last { $0.hasPrefix("map ") }.map { String($0.dropFirst(4).dropFirst(0x0F * 2).prefix(4)) }
    }

    static func rest(_ arguments: [String]) throws -> (status: Int32?, out: String, err: String) {
        let p = try ChildProcess(analogRemote: ["rest"] + arguments)
        let status = p.wait(timeout: .seconds(20))
        return (status, p.stdout, p.stderr)
    }

    @Test func aKilledReceiversBoardIsLeftAtRestAndALiveOnesIsNotTouched() throws {
        let dir = try Directory()
        let (sim, link) = try Self.boardSim(dir)
        defer { sim.stop() }
        // The robot's config, with keys of receive's that rest does not use: read as receive reads it.
        let config = try dir.file("receive.toml", "board = \"serial:\(link)\"\nno-advertise = true\nname = \"robot-under-test\"\nfailsafe-ms = 300\n")
        let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--port", "0", "--config", config])
        defer { receiver.stop() }
        let port = try ClassroomReceiver.port(of: receiver, what: "receiver")
        let script = try dir.file("drive.script", "0 0 none\n100 0 forward\n60000 0 forward\n")
        let driver = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(port)", "--input", "script:\(script)"])
        defer { driver.stop() }
        #expect(eventually { Self.motors(sim) == "c040" }, "the controller never drove: \(sim.stdout.suffix(300))")

        // Alive: refused with one line, exit 3, and the robot keeps being driven by its receiver.
        let probes = sim.stdout.components(separatedBy: "cmd R 00 ").count
        let busy = try Self.rest(["--config", config])
        #expect(busy.status == 3)
        #expect(busy.err == "analog-remote: serial:\(link): in use by another analog-remote process driving this board (a running receiver: "
                + "it leaves the board at rest itself when it stops, e.g. `systemctl stop analog-remote`); nothing was written\n", "\(busy.err)")
        #expect(busy.out.isEmpty)
        #expect(sim.stdout.components(separatedBy: "cmd R 00 ").count == probes, "the refused rest probed the board")
        #expect(Self.motors(sim) == "c040")

        // Killed: the firmware keeps the motors running; rest stops them.
        receiver.signal(SIGKILL)
        #expect(receiver.wait() != nil)
        usleep(300_000)
        #expect(Self.motors(sim) == "c040", "the board changed with nobody writing: \(sim.stdout.suffix(200))")
        let rested = try Self.rest(["--config", config])
        #expect(rested.status == 0, "\(rested.err)")
        #expect(rested.err.isEmpty)
        #expect(rested.out.hasPrefix("board at rest: serial:\(link) (motors profile, "), "\(rested.out)")
        #expect(rested.out.split(separator: "\n").count == 1)
        #expect(Self.motors(sim) == "0000")
        #expect(Self.leds(sim) == "0000")
    }

    @Test func badInputIsOneLineAndItsExitStatus() throws {
        let dir = try Directory()
        let noBoard = try dir.file("no-board.toml", "no-advertise = true\n")
        let typo = try dir.file("typo.toml", "bord = \"serial:/dev/ttyACM0\"\n")
        let cases: [(arguments: [String], status: Int32, line: (String) -> Bool)] = [
            (["--config", noBoard], 64, { $0 == "analog-remote: rest needs the board: --board SPEC, or `board` in the receiver's config file (--config FILE)\n" }),
            (["--config", typo], 2, { $0.hasPrefix("analog-remote: config \(typo): key \"bord\": ") && $0.contains("board") }),
            (["--board", "serial:/nonexistent/ttyACM9"], 3,
             { $0 == "analog-remote: serial:/nonexistent/ttyACM9: no such device (is the board plugged in? `analog-remote boards` lists candidates)\n" }),
            (["--board", "carrier-pigeon"], 64, { $0.hasPrefix("analog-remote: ") && $0.contains("carrier-pigeon") }),
            (["--board", "serial:/dev/null", "--profile", "fast"], 64, { $0.hasPrefix("analog-remote: ") && $0.contains("fast") }),
        ]
        for c in cases {
            let r = try Self.rest(c.arguments + (c.arguments.contains("--config") ? [] : ["--config", noBoard]))
            #expect(r.status == c.status, "\(c.arguments): \(r.err)")
            #expect(r.err.split(separator: "\n").count == 1 && c.line(r.err), "\(c.arguments): \(r.err)")
        }
        // The in-process simulated board is gone with the receiver that ran it: nothing to do.
        let sim = try Self.rest(["--board", "sim", "--config", noBoard])
        #expect(sim.status == 0 && sim.out.hasPrefix("nothing to rest: --board sim "), "\(sim.out)\(sim.err)")
    }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes.
private func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

struct RestTestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
