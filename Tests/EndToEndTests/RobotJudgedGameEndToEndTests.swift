import ControlWire
import Foundation
import SystemIO
import TestSupport
import Testing

/// A round the robots judge, end to end through the built binaries: three board-sims whose
/// switches the test presses (their --sensors files), three receivers under `--accept secret`,
/// and `analog-remote game --judge switch` listening to each with that robot's secret.
@Suite(.serialized) struct RobotJudgedGameEndToEndTests {
    final class Rig {
        let dir: String
        var sims: [ChildProcess] = []
        var receivers: [ChildProcess] = []
        var ports: [UInt16] = []
        var game: ChildProcess?

        init(robots: Int) throws {
            dir = NSTemporaryDirectory() + "analog-remote-judged-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for n in 1...robots {
                try "switch=0 sensor1=10\n".write(toFile: "\(dir)/sensors\(n)", atomically: true, encoding: .utf8)
                let sim = try ChildProcess(analogRemote: ["board-sim", "--quiet", "--firmware", "stock", "--sensors", "\(dir)/sensors\(n)",
                                                          "--link", "\(dir)/board\(n)"])
                sims.append(sim)
                guard sim.waitForOutput(timeout: .seconds(20), { out, _ in out.contains("\n") }) else {
                    throw ClassroomTestError("board-sim \(n) did not start: \(sim.stderr)")
                }
                let receiver = try ChildProcess(analogRemote: ["receive", "--quiet", "--no-advertise", "--port", "0", "--accept", "secret", "--session", "class-3b",
                                                               "--board", "serial:\(dir)/board\(n)", "--state-dir", "\(dir)/state\(n)"])
                receivers.append(receiver)
                ports.append(try ClassroomReceiver.port(of: receiver, what: "receiver \(n)"))
                guard receiver.waitForOutput({ out, _ in out.contains("\nsecret ") }),
                      let line = receiver.stdout.split(separator: "\n").first(where: { $0.hasPrefix("secret ") }) else {
                    throw ClassroomTestError("no secret printed: \(receiver.stdout)")
                }
                let file = "\(dir)/secret\(n)"
                guard FileManager.default.createFile(atPath: file, contents: Data(line.dropFirst("secret ".count).utf8),
                                                     attributes: [.posixPermissions: 0o600]) else {
                    throw ClassroomTestError("cannot write \(file)")
                }
            }
        }

        func startGame(rule: String) throws -> ChildProcess {
            let robots = ports.indices.flatMap { i in
                ["--robot", "robot\(i + 1)=127.0.0.1:\(ports[i]),secret-file=\(dir)/secret\(i + 1)"]
            }
            let game = try ChildProcess(analogRemote: ["game", "--quiet", "--session", "class-3b", "--no-advertise", "--judge", rule,
                                                       "--seconds", "60", "--results", dir] + robots)
            self.game = game
            return game
        }

        /// Replaces robot `n`'s sensors file in one rename.
        func set(_ n: Int, _ text: String) throws {
            let file = "\(dir)/sensors\(n)"
            try text.write(toFile: file + ".new", atomically: false, encoding: .utf8)
            guard rename(file + ".new", file) == 0 else { throw ClassroomTestError("rename \(file)") }
        }

        /// The round's own port for robot `n` (`listening to "robotN" … on udp port Q`).
        func gamePort(_ n: Int) -> UInt16? {
            game?.stdout.split(separator: "\n").first { $0.hasPrefix("listening to \"robot\(n)\"") }
                .flatMap { $0.split(separator: " ").last.flatMap { UInt16($0) } }
        }

        func stop() {
            game?.stop()
            for r in receivers { r.stop() }
            for s in sims { s.stop() }
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    /// The switch pressed on robot 2 first wins; robot 1 pressed later is second; robot 3,
    /// whose receiver then stops, is out. Under `secret`, robot 2's sealed reports replayed
    /// from another address to the round's ports for robots 1, 2 and 3 (needs raw sockets to
    /// capture them) give nobody a press.
    @Test func theSwitchPressedFirstWinsAndAReplayedReportChangesNothing() throws {
        let rig = try Rig(robots: 3)
        defer { rig.stop() }
        let game = try rig.startGame(rule: "switch")
        #expect(game.waitForOutput(timeout: .seconds(20)) { out, _ in (1...3).allSatisfy { out.contains("heard \"robot\($0)\"") } },
                "the round never heard every robot: \(game.stdout) \(game.stderr.suffix(1500))")
        let sniffer = SpoofedUDP.available ? try UDPSniffer() : nil

        try rig.set(2, "switch=1 sensor1=10\n")
        #expect(game.waitForOutput(timeout: .seconds(10)) { out, _ in out.contains("won \"robot2\"") },
                "robot 2's press did not win: \(game.stdout) \(game.stderr.suffix(1500))")

        if let sniffer {
            let q = try [1, 2, 3].map { n in try #require(rig.gamePort(n), "no port for robot\(n): \(game.stdout)") }
            // Every sealed datagram receiver 2 sent to the round since just before the press:
            // the report of the press among them.
            var captured: [[UInt8]] = []
            // Up to 1.5 s after the win (reports repeat every 500 ms: the press's and some repeats).
            let end = ContinuousClock.now + .milliseconds(1500)
            while ContinuousClock.now < end,
                  let seen = sniffer.first(toPort: q[1], timeout: max(.milliseconds(1), end - .now), where: { $0.count > 4 && $0[3] == ControlType.sealed.rawValue }) {
                captured.append(seen.payload)
            }
            try #require(!captured.isEmpty, "no sealed datagram to the round's port for robot 2 seen")
            let attacker = try UDPSocket.bind(port: 0)
            defer { attacker.close() }
            for port in q {
                let to = try SocketAddress.resolve("127.0.0.1:\(port)")
                for d in captured { _ = try attacker.send(d, to: to) }
            }
            print("replayed \(captured.count) sealed datagrams of robot 2 to ports \(q)")
        }

        try rig.set(1, "switch=1 sensor1=10\n")
        #expect(game.waitForOutput(timeout: .seconds(10)) { out, _ in out.contains("place 2 \"robot1\"") },
                "robot 1's press was not second: \(game.stdout)")
        rig.receivers[2].stop()
        #expect(game.waitForOutput(timeout: .seconds(10)) { out, _ in out.contains("out \"robot3\"") },
                "robot 3 was not out when its receiver stopped: \(game.stdout)")
        #expect(game.wait(timeout: .seconds(10)) == 0, "the round did not end by itself: \(game.stdout) \(game.stderr.suffix(1500))")
        let out = game.stdout
        #expect(out.contains("results: \"robot2\" won\n1. robot2 won "), "\(out)")
        #expect(out.contains("\n2. robot1 done "), "\(out)")
        #expect(out.contains("\n-. robot3 out (its reports stopped)\n"), "\(out)")
        #expect(!out.contains("place 3"), "a replayed report gave robot 3 a press: \(out)")

        // The lesson's result file: through the project's CSV writer.
        let csvName = try #require(try FileManager.default.contentsOfDirectory(atPath: rig.dir).first { $0.hasPrefix("robot-game-") && $0.hasSuffix(".csv") })
        let csv = try String(contentsOfFile: rig.dir + "/" + csvName, encoding: .utf8)
        let rows = csv.split(separator: "\r\n").map(String.init)
        #expect(rows.first == "rank,robot,result,seconds,reports")
        #expect(rows.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).prefix(3).joined(separator: ",") }
                == ["1,robot2,won", "2,robot1,done", ",robot3,out"], "\(csv)")
    }

    /// A rule or robot that cannot be judged is one clear line and a usage exit, before anything starts.
    @Test(arguments: [
        (["--judge", "hold:9:above:1:1", "--robot", "127.0.0.1:27183"], "--judge"),
        (["--judge", "switch"], "--robot"),
        (["--robot", "127.0.0.1:27183"], "--judge"),
        (["--judge", "switch", "--robot", "robot1=nowhere"], "--robot"),
        (["--judge", "switch", "--robot", "127.0.0.1:27183,secret=x"], "secret-file"),
    ])
    func aRoundThatCannotBeJudgedIsRefused(arguments: [String], mentions: String) throws {
        let run = try ChildProcess(analogRemote: ["game", "--session", "class-3b", "--no-advertise"] + arguments)
        #expect(run.wait() == 64, "\(run.stderr)")
        #expect(run.stderr.contains(mentions), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }
}
