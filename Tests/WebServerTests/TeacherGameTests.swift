import Foundation
import Logging
import RemoteWire
import SystemIO
import Testing
@testable import WebServer

/// The button game run from the dashboard: `game`'s host on the web server's UDP port; presses
/// of A move the standings; End writes the result to the lesson's log; a new Start is a new game.
@Suite(.serialized) struct TeacherGameTests {
    func waitFor(_ what: String, _ done: () -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !done() {
            guard ContinuousClock.now < deadline else { throw TimedOut(what: what) }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    struct TimedOut: Error { let what: String }

    @Test func aRoundFromStartToEndScoresPressesOfAAndLogsTheResult() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("teacher-game-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = try TeacherLog(directory: dir)
        let game = try TeacherGame(host: "127.0.0.1", name: "class game", session: "", events: log, logger: Logger(label: "test"))
        defer { game.stop() }
        #expect(game.snapshot == TeacherGame.Board())
        game.start()
        try waitFor("the round") { game.snapshot.playing && game.snapshot.port != nil }
        let port = try #require(game.snapshot.port)
        let to = try SocketAddress.resolve("127.0.0.1:\(port)")
        let player = try UDPSocket.sender(for: to)
        defer { player.close() }
        // Three presses (a hold between counts once), as `control` would send them.
        for state in [ControllerState(), .init(buttons: .a), .init(buttons: .a), .init(), .init(buttons: .a), .init(), .init(buttons: .a)] {
            _ = try player.send(StatePacket.encode(state), to: to)
            Thread.sleep(forTimeInterval: 0.005)
        }
        try waitFor("three points") { game.snapshot.standings.first?.points == 3 }
        let me = try player.localAddress()
        #expect(game.snapshot.standings == [.init(rank: 1, name: "127.0.0.1:\(me.port)", points: 3)])
        game.end()
        try waitFor("the end") { !game.snapshot.playing }
        // Presses after the end count for nothing.
        _ = try player.send(StatePacket.encode(.init()), to: to)
        _ = try player.send(StatePacket.encode(.init(buttons: .a)), to: to)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(game.snapshot.standings.first?.points == 3)
        let result = "round 1, 1 player: 1. 127.0.0.1:\(me.port) 3"
        try waitFor("the log") { log.csv().contains(result) }
        let lines = try String(contentsOfFile: try #require(log.path), encoding: .utf8).split(separator: "\n")
        let events = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.map { $0["event"] as? String } == ["game-start", "game-result"])
        #expect(events.last?["detail"] as? String == result)

        // The next round: a new game on the same port, scores from zero.
        game.start()
        try waitFor("round 2") { game.snapshot.playing && game.snapshot.round == 2 }
        #expect(game.snapshot.port == port)
        #expect(game.snapshot.standings.isEmpty)
        game.end()
        try waitFor("round 2's result") { log.csv().contains("round 2, 0 players") }
    }

    @Test func theRowsCarryTheGame() throws {
        var board = TeacherGame.Board()
        board.playing = true
        board.port = 40000
        board.round = 1
        board.standings = [.init(rank: 1, name: "Eve", points: 5), .init(rank: 2, name: "Ann", points: 2)]
        let json = TeacherRows.json([], now: .now, game: board)
        #expect(json.contains(#""game":{"playing":true,"port":40000,"round":1,"scores":[{"name":"Eve","points":5,"rank":1},{"name":"Ann","points":2,"rank":2}]}"#), "\(json)")
    }
}
