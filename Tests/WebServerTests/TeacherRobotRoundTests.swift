import BoardProtocol
import ControlWire
import Foundation
import Game
import Logging
import PhoneLink
import RemoteWire
import Synchronization
import Testing
@testable import WebServer

/// The dashboard's robots' round: ``RobotRound`` fed with the reports the link took, the
/// standings as the page gets them, the result in the lesson's log, one game at a time, and the
/// dashboard's Start checked field by field.
@Suite(.serialized) struct TeacherRobotRoundTests {
    static let ids: [UInt64] = [0x98e89e8941, 0x98e89e8942, 0x98e89e8943]
    static var keys: [String] { ids.map { RobotID(value: $0)!.text } }

    static func report(_ robot: Int, serial: UInt32, pressed: Bool, sensor1: UInt8 = 0) -> WatchReport {
        WatchReport(serial: serial, uptimeSeconds: 5, state: .free, robotID: ids[robot], name: "robot-\(robot + 1)",
                    sensors: SensorBlock(sensors: [sensor1, 0, 0, 0], switchValue: pressed ? 1 : 0))
    }

    static func rows(_ reports: [WatchReport?]) -> [TeacherLink.Row] {
        reports.enumerated().map { i, r in
            var row = TeacherLink.Row(id: "r\(i)", label: "robot \(i)")
            row.report = r
            row.name = r?.name.text
            return row
        }
    }

    static func page(_ board: TeacherRobotGame.Board) throws -> [String: Any] {
        let text = TeacherRows.json([], now: .now, robotGame: board)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        return try #require(object["robotGame"] as? [String: Any], "\(text)")
    }

    /// The standings as the page shows them: `name result` in order.
    static func shown(_ board: TeacherRobotGame.Board) throws -> [String] {
        let standings = try page(board)["standings"] as? [[String: Any]] ?? []
        return standings.map { "\($0["name"] as? String ?? "?") \($0["result"] as? String ?? "?")" }
    }

    @Test func robotTwosPressFirstWinsAndASilentRobotIsOutUnderAManualClock() throws {
        let t0 = ContinuousClock.now
        func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }
        let (entrants, leftOut) = TeacherRobotRound.entrants(Self.rows((0..<3).map { Self.report($0, serial: 1, pressed: false) }))
        #expect(entrants.map(\.name) == ["robot-1", "robot-2", "robot-3"] && leftOut.isEmpty)
        var round = TeacherRobotRound(number: 1, rule: .firstSwitch, entrants: entrants, now: at(0))
        for r in 0..<3 {
            let moved = round.report(Self.report(r, serial: 2, pressed: false), now: at(100))
            #expect(!moved)
        }
        // Robot 3 says nothing more; robots 1 and 2 report every half second.
        var moved = round.report(Self.report(1, serial: 3, pressed: true), now: at(600))
        #expect(moved)
        moved = round.report(Self.report(0, serial: 3, pressed: false), now: at(610))
        #expect(!moved)
        moved = round.report(Self.report(0, serial: 4, pressed: true), now: at(1100))
        #expect(moved)
        #expect(!round.isOver)
        // Robot 3's silence limit (1.5 s after its last report).
        moved = round.tick(now: at(1700))
        #expect(moved)
        #expect(round.isOver)
        let board = TeacherRobotGame.Board(playing: false, round: round.board(playing: false))
        #expect(try Self.shown(board) == ["robot-2 won", "robot-1 done", "robot-3 out"])
        let winner = try #require((try Self.page(board)["standings"] as? [[String: Any]])?.first)
        #expect(winner["robot"] as? String == Self.keys[1] && winner["rank"] as? Int == 1 && winner["seconds"] as? Double == 0.6)
        #expect(round.resultText == "robot round 1 (switch), 3 robots: 1. robot-2 won 0.600 s; 2. robot-1 done 1.100 s; "
            + "-. robot-3 out (its reports stopped)")
    }

    /// The hold rule on the dashboard: the longest hold so far on the page, the first to hold
    /// long enough wins at the hold's end; a push carries the round only when it changed.
    @Test func theHoldRuleShowsEachRobotsHoldAndPushesOnlyChanges() throws {
        let t0 = ContinuousClock.now
        func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }
        let (entrants, _) = TeacherRobotRound.entrants(Self.rows((0..<2).map { Self.report($0, serial: 1, pressed: false) }))
        var round = TeacherRobotRound(number: 3, rule: .hold(sensor: 1, above: true, threshold: 100, time: .seconds(1)),
                                      entrants: entrants, now: at(0))
        var push = TeacherPush(epoch: t0)
        func pushed(_ ms: Int) -> [String: Any]? {
            let text = push.next([], now: at(ms), roster: nil, missing: [], game: nil, dropped: 0, watchingSince: nil,
                                 robotGame: .init(playing: !round.isOver, round: round.board(playing: !round.isOver)))
            return text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }?["robotGame"] as? [String: Any]
        }
        #expect(pushed(0)?["rule"] as? String == "hold:1:above:100:1")
        for (ms, values) in [(100, (150, 50)), (600, (160, 200)), (900, (90, 210)), (1100, (200, 220)), (1700, (210, 230))] {
            _ = round.report(Self.report(0, serial: UInt32(ms), pressed: false, sensor1: UInt8(values.0)), now: at(ms))
            _ = round.report(Self.report(1, serial: UInt32(ms), pressed: false, sensor1: UInt8(values.1)), now: at(ms))
        }
        // Robot 2 held from 600 ms: done at 1600 ms; robot 1 broke its hold at 900 ms, holds again from 1100 ms.
        let page = try #require(pushed(1700))
        let standings = try #require(page["standings"] as? [[String: Any]])
        #expect(standings.map { $0["name"] as? String } == ["robot-2", "robot-1"])
        #expect(standings[0]["result"] as? String == "won" && standings[0]["seconds"] as? Double == 1.6, "\(standings)")
        #expect(standings[1]["result"] as? String == "playing" && standings[1]["hold"] as? Double == 0.6, "\(standings)")
        // Nothing moved: nothing pushed.
        #expect(push.next([], now: at(1750), roster: nil, missing: [], game: nil, dropped: 0, watchingSince: nil,
                          robotGame: .init(playing: true, round: round.board(playing: true))) == nil)
    }

    /// Only the robots that proved who they are (a taken report) play, by robot id, under their
    /// signed names made safe to show; a robot without sensors is left out and named.
    @Test func theEntrantsAreTheRowsWithATakenReport() {
        var noSensors = Self.report(2, serial: 1, pressed: false)
        noSensors.sensors = nil
        var twin = Self.report(1, serial: 1, pressed: false)
        twin.name = "robot-1"
        var nasty = Self.report(0, serial: 1, pressed: false)
        nasty.name = "robot-1\u{1B}[2J"
        var rows = Self.rows([nasty, nil, noSensors])
        rows.append(contentsOf: Self.rows([twin]).map { var r = $0; r.id = "r9"; return r })
        let (entrants, leftOut) = TeacherRobotRound.entrants(rows)
        #expect(entrants.map(\.robot) == [Self.keys[1], Self.keys[0]] || entrants.map(\.robot) == [Self.keys[0], Self.keys[1]])
        #expect(entrants.allSatisfy { !$0.name.unicodeScalars.contains { $0.value < 0x20 } }, "\(entrants)")
        #expect(entrants.contains { $0.name == "robot-1 (\(Self.keys[1]))" } || entrants.contains { $0.name == "robot-1" }, "\(entrants)")
        #expect(leftOut == ["robot-3"])
    }

    final class Log: Sendable {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("robot-round-\(UInt32.random(in: 0...UInt32.max))").path
        let log: TeacherLog
        init() throws { log = try TeacherLog(directory: dir) }
        deinit { try? FileManager.default.removeItem(atPath: dir) }

        /// The file's events, as the lesson's log has them.
        var events: [(event: String, detail: String)] {
            let text = (try? String(contentsOfFile: log.path ?? "", encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                return (o["event"] as? String ?? "", o["detail"] as? String ?? "")
            }
        }
    }

    func waitFor(_ what: String, timeout: Duration = .seconds(5), _ done: () -> Bool) throws {
        let end = ContinuousClock.now + timeout
        while !done() {
            guard ContinuousClock.now < end else { throw Timeout(what: what) }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    struct Timeout: Error { let what: String }

    /// The running round: reports arrive as the link hands them over; robot 2 presses first and
    /// wins, robot 3 goes silent and is out, the round decides itself once robot 1 pressed too;
    /// every step reaches the dashboard, and the log gets the start and the result.
    @Test func theRoundOnTheDashboardPushesTheStandingsAndLogsTheResult() throws {
        let log = try Log()
        final class Pushes: Sendable { let count = Mutex(0) }
        let pushes = Pushes()
        let game = try TeacherRobotGame(floor: GameFloor(), events: log.log, logger: Logger(label: "test"),
                                        changed: { pushes.count.withLock { $0 += 1 } })
        defer { game.stop() }
        let (entrants, _) = TeacherRobotRound.entrants(Self.rows((0..<3).map { Self.report($0, serial: 1, pressed: false) }))
        // Nothing counts before the Start.
        game.report(Self.report(1, serial: 1, pressed: true), at: .now)
        #expect(game.start(.firstSwitch, entrants: entrants))
        #expect(game.snapshot.playing)
        for r in 0..<3 { game.report(Self.report(r, serial: 2, pressed: false), at: .now) }
        let before = pushes.count.withLock { $0 }
        Thread.sleep(forTimeInterval: 0.2)
        game.report(Self.report(1, serial: 3, pressed: true), at: .now)
        game.report(Self.report(0, serial: 3, pressed: false), at: .now)
        try waitFor("robot 2's win") { (try? Self.shown(game.snapshot).first) == "robot-2 won" }
        #expect(pushes.count.withLock { $0 } > before, "the win was not pushed")
        // Robot 3 is silent; robot 1 keeps reporting until it presses.
        for serial in UInt32(4)...7 {
            Thread.sleep(forTimeInterval: 0.4)
            game.report(Self.report(0, serial: serial, pressed: serial == 7), at: .now)
        }
        try waitFor("the end of the round") { !game.snapshot.playing }
        #expect(try Self.shown(game.snapshot) == ["robot-2 won", "robot-1 done", "robot-3 out"])
        try waitFor("the log") { log.events.count == 2 }
        #expect(log.events.map(\.event) == ["game-start", "game-result"])
        #expect(log.events[0].detail == "robot round 1 (switch), 3 robots: first to press its robot's switch wins; robots: robot-1, robot-2, robot-3")
        let result = log.events[1].detail
        #expect(result.hasPrefix("robot round 1 (switch), 3 robots: 1. robot-2 won "), "\(result)")
        #expect(result.contains("; 2. robot-1 done ") && result.hasSuffix("; -. robot-3 out (its reports stopped)"), "\(result)")
        #expect(log.log.csv().contains("game-result"))
        // After the round: reports change nothing.
        game.report(Self.report(2, serial: 9, pressed: true), at: .now)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(try Self.shown(game.snapshot) == ["robot-2 won", "robot-1 done", "robot-3 out"])
    }

    /// The two games never play at once: a Start of one while the other plays is refused with a
    /// line on the dashboard and changes nothing; once it is over, the other starts.
    @Test func oneGameAtATime() throws {
        let log = try Log()
        let floor = GameFloor()
        let button = try TeacherGame(host: "127.0.0.1", name: "class game", session: "", events: log.log, logger: Logger(label: "test"),
                                     floor: floor)
        defer { button.stop() }
        let robots = try TeacherRobotGame(floor: floor, events: log.log, logger: Logger(label: "test"))
        defer { robots.stop() }
        let (entrants, _) = TeacherRobotRound.entrants(Self.rows((0..<3).map { Self.report($0, serial: 1, pressed: false) }))
        #expect(button.start())
        try waitFor("the button game") { button.snapshot.playing }
        #expect(!robots.start(.firstSwitch, entrants: entrants))
        #expect(!robots.snapshot.playing && robots.snapshot.notice == "not started: the button game is playing; end it first (one game at a time)")
        button.end()
        try waitFor("the button game's end") { !button.snapshot.playing && floor.current == nil }
        #expect(robots.start(.firstSwitch, entrants: entrants))
        #expect(!button.start())
        #expect(button.snapshot.notice == "not started: the robots' round is playing; end it first (one game at a time)")
        Thread.sleep(forTimeInterval: 0.1)
        #expect(!button.snapshot.playing)
        #expect(!robots.start(.firstSwitch, entrants: entrants), "a second robots' round started over the first")
        robots.end()
        try waitFor("the robots' round's end") { !robots.snapshot.playing && floor.current == nil }
        #expect(button.start())
        try waitFor("the button game again") { button.snapshot.playing }
        #expect(log.events.map(\.event) == ["game-start", "game-result", "game-start", "game-result", "game-start"])
    }

    /// The dashboard's Start, field by field: every bad field is refused with one line saying
    /// which, nothing starts; good ones give the rule `game --judge` spells the same way.
    @Test(arguments: [
        (#"{"t":"robot-game-start"}"#, "the rule must be \"switch\" or \"hold\""),
        (#"{"t":"robot-game-start","rule":"jump"}"#, "the rule must be \"switch\" or \"hold\""),
        (#"{"t":"robot-game-start","rule":7}"#, "the rule must be \"switch\" or \"hold\""),
        (#"{"t":"robot-game-start","rule":"hold","sensor":0,"side":"above","threshold":1,"seconds":1}"#, "the sensor must be a whole number from 1 to 4"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":5,"side":"above","threshold":1,"seconds":1}"#, "the sensor must be a whole number from 1 to 4"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":"2","side":"above","threshold":1,"seconds":1}"#, "the sensor must be a whole number from 1 to 4"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2.5,"side":"above","threshold":1,"seconds":1}"#, "the sensor must be a whole number from 1 to 4"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2,"side":"over","threshold":1,"seconds":1}"#, "the side must be \"above\" or \"below\""),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2,"side":"above","threshold":256,"seconds":1}"#, "the threshold must be a whole number from 0 to 255"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2,"side":"above","threshold":-1,"seconds":1}"#, "the threshold must be a whole number from 0 to 255"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2,"side":"above","threshold":1e40,"seconds":1}"#, "the threshold must be a whole number from 0 to 255"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2,"side":"above","threshold":9,"seconds":0}"#, "the time must be a number of seconds above 0 and at most 600"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2,"side":"above","threshold":9,"seconds":601}"#, "the time must be a number of seconds above 0 and at most 600"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2,"side":"above","threshold":9,"seconds":-3}"#, "the time must be a number of seconds above 0 and at most 600"),
        (#"{"t":"robot-game-start","rule":"hold","sensor":2,"side":"above","threshold":9}"#, "the time must be a number of seconds above 0 and at most 600"),
    ])
    func aBadStartIsRefusedWithALine(command: String, why: String) throws {
        let dashboard = try Self.dashboard()
        defer { dashboard.stop() }
        dashboard.command(command)
        #expect(dashboard.robotGame.snapshot.notice == "not started: " + why)
        #expect(!dashboard.robotGame.snapshot.playing && dashboard.robotGame.snapshot.round == nil)
    }

    @Test func goodRulesAreTheJudgesSpelling() {
        #expect(TeacherRobotRound.rule("switch", sensor: nil, side: nil, threshold: nil, seconds: nil) == .success(.firstSwitch))
        #expect(TeacherRobotRound.rule("hold", sensor: 2, side: "below", threshold: 40, seconds: 2.5)
            == .success(RobotRound.Rule("hold:2:below:40:2.5")!))
        #expect(TeacherRobotRound.rule("hold", sensor: 4, side: "above", threshold: 255, seconds: 600)
            == .success(.hold(sensor: 4, above: true, threshold: 255, time: .seconds(600))))
    }

    /// A good Start with no robot that can play is refused too (nothing to judge).
    @Test func aStartWithoutRobotsIsRefused() throws {
        let dashboard = try Self.dashboard()
        defer { dashboard.stop() }
        dashboard.command(#"{"t":"robot-game-start","rule":"switch"}"#)
        #expect(dashboard.robotGame.snapshot.notice?.hasPrefix("not started: no robot can play") == true)
        #expect(!dashboard.robotGame.snapshot.playing)
        // Garbage and an End with nothing playing change nothing and crash nothing.
        for text in ["", "{", "[]", #"{"t":5}"#, #"{"t":"robot-game-end"}"#, String(repeating: "{", count: 1000)] { dashboard.command(text) }
        #expect(!dashboard.robotGame.snapshot.playing)
    }

    static func dashboard() throws -> TeacherDashboard {
        let hub = PhoneHub(settings: .init(session: "AnalogRemote"), logger: Logger(label: "test"))
        let log = try TeacherLog(directory: nil)
        let link = try TeacherLink(hub: hub, teacherKey: TeacherLinkReportTests.keyText, session: "AnalogRemote", events: log,
                                   logger: Logger(label: "test"))
        return try dashboard(link: link)
    }

    /// The dashboard `web` assembles around `link` (the test's key, the button game on loopback).
    static func dashboard(link: TeacherLink) throws -> TeacherDashboard {
        try TeacherSetup.assemble(link: link, key: TeacherLinkReportTests.keyText, secureCookie: false, gameHost: "127.0.0.1",
                                  gameName: "g", session: "", events: link.events, logger: Logger(label: "test"))
    }
}

extension TeacherDashboard {
    func stop() { game.stop(); robotGame.stop() }
}
