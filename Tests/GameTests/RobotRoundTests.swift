import BoardProtocol
import Game
import Testing

/// The rounds the robots judge, on a manual clock: who wins, who is out, what the log gets.
@Suite struct RobotRoundTests {
    let t0 = ContinuousClock.now
    func at(_ ms: Int) -> ContinuousClock.Instant { t0 + .milliseconds(ms) }
    func block(switch pressed: Bool = false, sensors: [UInt8] = [0, 0, 0, 0]) -> SensorBlock {
        SensorBlock(sensors: sensors, switchValue: pressed ? 1 : 0, temperature: 21, humidity: 40)
    }

    @Test func theFirstRobotToPressItsSwitchWinsTheOthersArePlacedByTheirPress() {
        var r = RobotRound(rule: .firstSwitch, robots: ["robot1", "robot2", "robot3"], now: t0)
        for i in 0..<3 { #expect(r.report(robot: i, block(), now: at(100)) == [.heard(robot: i)]) }
        #expect(r.report(robot: 0, block(), now: at(400)).isEmpty)
        #expect(r.report(robot: 1, block(switch: true), now: at(500)) == [.done(robot: 1, place: 1)])
        #expect(r.winner == 1)
        #expect(!r.isOver)
        // Pressing again does not count twice.
        #expect(r.report(robot: 1, block(), now: at(550)).isEmpty)
        #expect(r.report(robot: 1, block(switch: true), now: at(600)).isEmpty)
        #expect(r.report(robot: 2, block(switch: true), now: at(700)) == [.done(robot: 2, place: 2)])
        #expect(r.end(now: at(900)).isEmpty)
        #expect(r.isOver)
        #expect(r.robots[1].standing == .done(place: 1, after: .milliseconds(500)))
        #expect(r.robots[0].standing == .lost)
        #expect(r.csv() == "rank,robot,result,seconds,reports\r\n1,robot2,won,0.500,2\r\n2,robot3,done,0.700,2\r\n3,robot1,lost,,2\r\n")
        #expect(r.lines == ["1. robot2 won 0.500 s", "2. robot3 done 0.700 s", "3. robot1 lost"])
    }

    @Test func theRoundIsOverWhenEveryRobotIsDoneOrOut() {
        var r = RobotRound(rule: .firstSwitch, robots: ["a", "b"], now: t0)
        _ = r.report(robot: 0, block(), now: at(100))
        _ = r.report(robot: 1, block(), now: at(100))
        _ = r.report(robot: 0, block(switch: true), now: at(200))
        #expect(!r.isOver)
        #expect(r.tick(now: at(1700)) == [.out(robot: 1)])
        #expect(r.isOver)
        #expect(r.winner == 0)
        #expect(r.robots[0].standing == .done(place: 1, after: .milliseconds(200)))
    }

    @Test func aSwitchHeldSinceBeforeTheRoundMustBeLetGoFirst() {
        var r = RobotRound(rule: .firstSwitch, robots: ["a", "b"], now: t0)
        #expect(r.report(robot: 0, block(switch: true), now: at(50)) == [.heard(robot: 0)])
        #expect(r.report(robot: 0, block(switch: true), now: at(300)).isEmpty)
        #expect(r.report(robot: 1, block(), now: at(300)) == [.heard(robot: 1)])
        #expect(r.report(robot: 0, block(), now: at(600)).isEmpty)
        #expect(r.report(robot: 0, block(switch: true), now: at(700)) == [.done(robot: 0, place: 1)])
    }

    @Test func aRobotWhoseReportsStopIsOutNotAWinner() {
        var r = RobotRound(rule: .firstSwitch, robots: ["a", "b"], now: t0)
        _ = r.report(robot: 0, block(), now: at(100))
        _ = r.report(robot: 1, block(), now: at(100))
        // Robot a keeps reporting; b goes silent.
        _ = r.report(robot: 0, block(), now: at(1000))
        #expect(r.deadline() == at(1600))
        #expect(r.tick(now: at(1599)).isEmpty)
        #expect(r.tick(now: at(1601)) == [.out(robot: 1)])
        // A late report of b (pressed) changes nothing: it is out for the round.
        #expect(r.report(robot: 1, block(switch: true), now: at(1700)).isEmpty)
        #expect(r.robots[1].standing == .out)
        _ = r.report(robot: 0, block(switch: true), now: at(1800))
        #expect(r.winner == 0)
        #expect(r.lines == ["1. a won 1.800 s", "-. b out (its reports stopped)"])
    }

    @Test func aRobotThatNeverReportsIsOutAndAllOutEndsWithoutAWinner() {
        var r = RobotRound(rule: .firstSwitch, robots: ["a", "b"], now: t0)
        #expect(r.tick(now: at(1501)) == [.out(robot: 0), .out(robot: 1)])
        #expect(r.isOver)
        #expect(r.winner == nil)
        #expect(r.standings.map(\.rank) == [nil, nil])
    }

    @Test func holdingASensorAboveTheThresholdForTheTimeWins() throws {
        let rule = try #require(RobotRound.Rule("hold:2:above:128:3"))
        #expect(rule == .hold(sensor: 2, above: true, threshold: 128, time: .seconds(3)))
        #expect(rule.description == "hold:2:above:128:3")
        var r = RobotRound(rule: rule, robots: ["a", "b"], now: t0)
        // a: above at 0.1 s, dips at 1 s, above again from 1.2 s.
        _ = r.report(robot: 0, block(sensors: [0, 200, 0, 0]), now: at(100))
        _ = r.report(robot: 1, block(sensors: [0, 129, 0, 0]), now: at(500))
        _ = r.report(robot: 0, block(sensors: [0, 128, 0, 0]), now: at(1000))   // not above
        _ = r.report(robot: 0, block(sensors: [0, 250, 0, 0]), now: at(1200))
        // Both keep reporting (repeats) while their values hold.
        for ms in stride(from: 1500, through: 3400, by: 500) {
            #expect(r.report(robot: 0, block(sensors: [0, 250, 0, 0]), now: at(ms)).isEmpty)
            #expect(r.report(robot: 1, block(sensors: [0, 129, 0, 0]), now: at(ms)).isEmpty)
        }
        // b's hold (from 0.5 s) ends at 3.5 s, before a's (from 1.2 s, at 4.2 s).
        #expect(r.deadline() == at(3500))
        #expect(r.tick(now: at(3500)) == [.done(robot: 1, place: 1)])
        #expect(r.robots[1].standing == .done(place: 1, after: .milliseconds(3500)))
        #expect(r.winner == 1)
        #expect(r.end(now: at(3600)).isEmpty)
        #expect(r.lines == ["1. b won 3.500 s", "2. a held 2.400 s"])
    }

    @Test func aHoldDoesNotWinForARobotThatWentSilent() {
        var r = RobotRound(rule: .hold(sensor: 1, above: false, threshold: 10, time: .seconds(2)), robots: ["a"], now: t0)
        _ = r.report(robot: 0, block(sensors: [5, 0, 0, 0]), now: at(100))
        // No report after 0.1 s: out at 1.6 s, before its hold would end at 2.1 s.
        #expect(r.tick(now: at(1700)) == [.out(robot: 0)])
        #expect(r.tick(now: at(2200)).isEmpty)
        #expect(r.winner == nil)
    }

    @Test func rulesThatDoNotParse() {
        for bad in ["", "hold", "hold:0:above:1:1", "hold:5:above:1:1", "hold:1:over:1:1", "hold:1:above:256:1",
                    "hold:1:above:1:0", "hold:1:above:1:-1", "hold:1:above:1:nan", "switch:1"] {
            #expect(RobotRound.Rule(bad) == nil, "\(bad)")
        }
    }
}
