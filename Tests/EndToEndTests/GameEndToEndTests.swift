import ControlPlane
import ControlWire
import Foundation
import Game
import RemoteWire
import SystemIO
import TestSupport
import Testing

/// `analog-remote game` over loopback (Protocol.md §7.8): simulated players say hello and press
/// A; the scores sent back, the printed standings and the results files all match the presses.
@Suite(.serialized) struct GameEndToEndTests {
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-game-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func press(_ peer: ClassroomPeer, times: Int) throws {
        for _ in 0..<times {
            try peer.send(ControllerState(angle: 0, buttons: .a))
            try peer.send(ControllerState(angle: 0, buttons: .a))   // a resend while held: no point
            try peer.send(.neutral)
        }
    }

    /// The `wrote PATH` lines of the game's stdout.
    static func written(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").filter { $0.hasPrefix("wrote ") }.map { String($0.dropFirst(6)) }
    }

    /// RFC 4180 rows of simple fields (the test's names need no quoting).
    static func csvRows(_ text: String) -> [[String]] {
        text.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test func thirtyTwoPlayersScoresMatchThePresses() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let game = try ChildProcess(analogRemote: ["game", "--quiet", "--session", "class-3b", "--no-advertise", "--results", dir.path])
        let port = try ClassroomReceiver.port(of: game, what: "game")

        let names = (1...32).map { "player \($0 < 10 ? "0" : "")\($0)" }
        let presses = (0..<32).map { ($0 * 7) % 11 + 1 }          // 1…11 each, known in advance
        let players = try names.map { _ in try ClassroomPeer(port: port) }
        for (p, name) in zip(players, names) {
            try p.say(.hello(.init(peerID: .random(in: 1...UInt64.max), displayName: WireText(name), session: "class-3b")))
        }
        for (p, name) in zip(players, names) {
            #expect(try p.pump { _ in p.accepted }, "\(name) not accepted")
        }
        // Four players at a time (so the game's socket buffer never overflows), each waiting for
        // its own count to come back.
        for group in stride(from: 0, to: 32, by: 4) {
            for i in group..<group + 4 { try Self.press(players[i], times: presses[i]) }
            for i in group..<group + 4 {
                #expect(try players[i].pump { _ in players[i].scores.last?.points == UInt32(presses[i]) },
                        "\(names[i]): scores \(players[i].scores)")
            }
        }
        // A plain 8-byte sender plays under its address.
        let plain = try ClassroomPeer(port: port)
        try Self.press(plain, times: 3)
        #expect(game.waitForOutput { out, _ in out.split(separator: "\n").count >= 2 + 33 }, "\(game.stdout)")
        #expect(UDPQueue.waitUntilDrained(port: port), "the game did not read all presses")

        game.signal(SIGINT)
        // Every player gets a final score, with its rank among the 33.
        for (i, p) in players.enumerated() {
            #expect(try p.pump { _ in p.scores.last?.phase == .final }, "\(names[i]) got no final score")
            let last = try #require(p.scores.last)
            #expect(last.points == UInt32(presses[i]) && last.players == 33)
            let better = presses.filter { $0 > presses[i] }.count + (3 > presses[i] ? 1 : 0)
            #expect(Int(last.rank) == better + 1, "\(names[i])")
        }
        #expect(game.wait() == 0, "\(game.stderr)")

        let files = Self.written(game.stdout)
        #expect(files.count == 2 && files[0].hasSuffix(".csv") && files[1].hasSuffix(".json"), "\(game.stdout)")
        #expect(files.allSatisfy { $0.hasPrefix(dir.path + "/button-game-") }, "\(files)")
        let rows = Self.csvRows(try String(contentsOfFile: files[0], encoding: .utf8))
        #expect(rows.first == ["rank", "name", "points"])
        var csvPoints: [String: Int] = [:]
        for row in rows.dropFirst() where row.count == 3 { csvPoints[row[1]] = Int(row[2]) }
        for (name, n) in zip(names, presses) { #expect(csvPoints[name] == n, "\(name) in the CSV") }
        let plainName = try #require(csvPoints.keys.first { $0.hasPrefix("127.0.0.1:") })
        #expect(csvPoints[plainName] == 3 && csvPoints.count == 33)
        let ranks = rows.dropFirst().compactMap { Int($0[0]) }
        #expect(ranks == ranks.sorted() && ranks.first == 1)

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: files[1]))) as? [String: Any]
        #expect(json?["session"] as? String == "class-3b")
        let entries = try #require(json?["players"] as? [[String: Any]])
        #expect(entries.count == 33)
        for entry in entries {
            let name = try #require(entry["name"] as? String)
            #expect(entry["points"] as? Int == csvPoints[name], "\(name) in the JSON")
        }
        // The standings printed on stdout agree.
        #expect(game.stdout.contains("results: 33 players, 1 round\n"))
        #expect(game.stdout.contains(". \(names[presses.firstIndex(of: presses.max()!)!]) \(presses.max()!)\n"))
    }

    /// Rounds end on their own; the controller binary is a player and shows its final score.
    @Test func roundsEndOnTheirOwnAndTheControllerShowsItsScore() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let game = try ChildProcess(analogRemote: ["game", "--quiet", "--session", "s", "--no-advertise", "--results", dir.path,
                                                   "--rounds", "2", "--seconds", "2"])
        let port = try ClassroomReceiver.port(of: game, what: "game")
        // 3 presses early in round 1, 2 early in round 2 (rounds are 2 s from the game's start).
        let script = dir.appendingPathComponent("presses.script")
        var lines = ["0 0 none"]
        for t in [200, 400, 600, 2600, 2800] { lines += ["\(t) 0 a", "\(t + 100) 0 none"] }
        lines.append("5000 0 none")
        try lines.joined(separator: "\n").appending("\n").write(to: script, atomically: true, encoding: .utf8)
        let control = try ChildProcess(analogRemote: ["control", "--quiet", "--peer", "127.0.0.1:\(port)", "--name", "Ann",
                                                      "--input", "script:\(script.path)"])
        #expect(game.wait(timeout: .seconds(15)) == 0, "\(game.stdout) \(game.stderr)")
        #expect(game.stdout.contains("round 1 over\nround 2 of 2\n"), "\(game.stdout)")
        #expect(control.waitForOutput { _, err in err.contains("game over: ") }, "\(control.stderr)")
        #expect(control.stderr.contains("game over: game 5 points · rank 1 of 1 · round 2 of 2\n"), "\(control.stderr)")
        #expect(control.wait(timeout: .seconds(10)) == 0)
        let files = Self.written(game.stdout)
        #expect(files.count == 2)
        let csv = try String(contentsOfFile: try #require(files.first), encoding: .utf8)
        #expect(csv == "rank,name,points,round1,round2\r\n1,Ann,5,3,2\r\n")
    }

    @Test func withoutADaemonTheGameSaysSoAndExits5() throws {
        let p = try ChildProcess(analogRemote: ["game", "--quiet", "--session", "s"],
                                 environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/analog-remote-test"])
        #expect(p.wait() == 5)
        #expect(p.stderr == "analog-remote: no mDNS responder is running — start avahi-daemon, or use --no-advertise\n")
    }

    @Test func anUnwritableResultsDirectoryIsRefusedAtStart() throws {
        let p = try ChildProcess(analogRemote: ["game", "--quiet", "--session", "s", "--no-advertise",
                                                "--results", "/nonexistent/analog-remote"])
        #expect(p.wait() == 2)
        #expect(p.stderr == "analog-remote: --results /nonexistent/analog-remote: No such file or directory (give a writable directory)\n")
        #expect(p.stdout.isEmpty)
    }
}
