#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Console
import ControlPlane
import ControlWire
import Controller
import Logging
import RemoteWire
import SystemIO

/// One robot a judged round listens to.
package struct JudgedRobot: Sendable {
    package var name: String
    package var address: SocketAddress
    /// The robot's secret, for a receiver under `--accept secret`: the round's connection to it
    /// is then sealed, and only reports that open under its key count.
    package var secret: RobotSecret?

    package init(name: String, address: SocketAddress, secret: RobotSecret? = nil) {
        self.name = name
        self.address = address
        self.secret = secret
    }
}

/// What `analog-remote game --judge RULE --robot …` was asked to do.
package struct JudgeConfiguration: Sendable {
    package var rule: RobotRound.Rule
    package var robots: [JudgedRobot]
    package var session: String
    /// The name the round says hello with (each receiver shows it as a controller).
    package var name: String
    /// nil = until a robot wins, every robot is out, or SIGINT/SIGTERM.
    package var timeLimit: Duration?
    package var resultsDirectory = "."

    package init(rule: RobotRound.Rule, robots: [JudgedRobot], session: String, name: String) {
        self.rule = rule
        self.robots = robots
        self.session = session
        self.name = name
    }
}

/// A round the robots judge (``RobotRound``), run against live receivers. The round is a
/// controller of each robot that never drives: one ``ControlSession`` per robot (hello, pings,
/// under a secret the sealed handshake), the same trust path as a driver's, so a robot's result
/// comes only from reports on its own connection — from the receiver's address, with the
/// connection id it gave, and under `--accept secret` opened under the robot's key. The round
/// sends no state packet: it changes nothing a robot does.
///
/// stdout: `judging N robots: TASK`, `listening to "NAME" HOST:PORT on udp port N` per robot
/// (the round's own port for that robot), then as they happen `refused by "NAME": WHY`, `heard "NAME"` (its first report),
/// `won "NAME" after S s` / `place P "NAME" after S s`, `out "NAME": its reports stopped`; at the
/// end `results: …`, one line per robot (``RobotRound/lines``) and `wrote PATH` for
/// DIR/robot-game-…csv.
package final class RobotJudgeService {
    private let configuration: JudgeConfiguration
    private let runner: LoopRunner<Never>
    private let logger: Logger
    private var sockets: [UDPSocket] = []
    private var sessions: [ControlSession] = []
    private var taken: [ContinuousClock.Instant?]
    private var round: RobotRound
    private let startedWall: timespec

    package init(configuration: JudgeConfiguration, logger: Logger) throws(CommandFailure) {
        self.configuration = configuration
        self.logger = logger
        runner = try GameService.prepare(resultsDirectory: configuration.resultsDirectory)
        // Each report would be an info line (the driver's log): the round says what counts itself.
        var sessionLogger = logger
        if sessionLogger.logLevel < .notice { sessionLogger.logLevel = .notice }
        for robot in configuration.robots {
            do {
                sockets.append(try UDPSocket.sender(for: robot.address))
            } catch {
                throw CommandFailure("\(error)", kind: .networkUnavailable)
            }
            sessions.append(ControlSession(.init(displayName: configuration.name, session: configuration.session, secret: robot.secret),
                                           logger: sessionLogger))
        }
        taken = Array(repeating: nil, count: configuration.robots.count)
        startedWall = WallClock.now()
        round = RobotRound(rule: configuration.rule, robots: configuration.robots.map(\.name), now: .now)
    }

    package func run() throws(CommandFailure) -> CommandOutcome {
        let robots = configuration.robots
        StandardOutput.write("judging \(robots.count) robot\(robots.count == 1 ? "" : "s"): \(configuration.rule.task)\n")
        let now = ContinuousClock.now
        round = RobotRound(rule: configuration.rule, robots: robots.map(\.name), now: now)
        let timeUp = configuration.timeLimit.map { now + $0 }
        for i in robots.indices { _ = sessions[i].service(socket: sockets[i], peer: robots[i].address, now: now, readable: false) }
        // The hello went out: each socket has its port now.
        for i in robots.indices {
            let port = (try? sockets[i].localAddress().port).map(String.init) ?? "?"
            StandardOutput.write("listening to \(ConsoleLogHandler.quote(robots[i].name)) \(robots[i].address) on udp port \(port)\n")
        }
        var stopped = false
        var refused = [Bool](repeating: false, count: robots.count)
        do throws(SystemError) {
            while !round.isOver {
                var deadline = [round.deadline(), timeUp].compactMap { $0 }.min()
                for s in sessions { if let d = s.nextDeadline { deadline = deadline.map { min($0, d) } ?? d } }
                let wake = try runner.wait(sockets.map { ($0.descriptor.rawValue, .readable) }, untilInstant: deadline)
                if wake.stop != nil { stopped = true; break }
                let now = ContinuousClock.now
                for i in robots.indices {
                    let actions = sessions[i].service(socket: sockets[i], peer: robots[i].address, now: now, readable: !wake.ready[i].isEmpty)
                    for case .end(let reason) in actions where !refused[i] {
                        // A robot that refuses the round (another session, a wrong secret) sends no
                        // report: it will be out; the driver of the round is told why at once.
                        refused[i] = true
                        let why: String
                        if case .refused(let text) = reason { why = text } else { why = "\(reason)" }
                        StandardOutput.write("refused by \(ConsoleLogHandler.quote(robots[i].name)): \(why)\n")
                    }
                    let feedback = sessions[i].feedback
                    if let heard = feedback.sensorsHeard, heard != taken[i], let sensors = feedback.sensors {
                        taken[i] = heard
                        tell(round.report(robot: i, sensors.block, now: heard))
                    }
                }
                tell(round.tick(now: now))
                if let timeUp, now >= timeUp, !round.isOver { tell(round.end(now: now)) }
            }
        } catch {
            throw CommandFailure("the round's loop failed: \(error)", kind: .failed)
        }
        if !round.isOver { tell(round.end(now: .now)) }
        for i in robots.indices {
            sessions[i].finish(socket: sockets[i], peer: robots[i].address)
            sockets[i].close()
        }
        if stopped && round.winner == nil { StandardOutput.write("round stopped\n") }
        StandardOutput.write("results: \(round.winner.map { "\(ConsoleLogHandler.quote(round.robots[$0].name)) won" } ?? "no winner")\n")
        for line in round.lines { StandardOutput.write(line + "\n") }
        let base = Self.resultsBase(directory: configuration.resultsDirectory, wall: startedWall)
        var path = base + ".csv"
        var n = 2
        while access(path, F_OK) == 0 {
            path = "\(base)-\(n).csv"
            n += 1
        }
        do {
            try GameService.write(round.csv(), to: path)
        } catch {
            throw CommandFailure("cannot write the results: \(error) (check --results DIR)", kind: .failed)
        }
        StandardOutput.write("wrote \(path)\n")
        return .done
    }

    private func tell(_ events: [RobotRound.Event]) {
        for event in events {
            switch event {
            case .out(let i):
                StandardOutput.write("out \(ConsoleLogHandler.quote(round.robots[i].name)): its reports stopped\n")
            case .heard(let i):
                StandardOutput.write("heard \(ConsoleLogHandler.quote(round.robots[i].name))\n")
            case .done(let i, let place):
                if case .done(_, let after) = round.robots[i].standing {
                    StandardOutput.write("\(place == 1 ? "won" : "place \(place)") \(ConsoleLogHandler.quote(round.robots[i].name)) after \(RobotRound.seconds(after)) s\n")
                }
            }
        }
    }

    /// `DIR/robot-game-YYYYMMDD-HHMMSS` (local time of the start).
    static func resultsBase(directory: String, wall: timespec) -> String {
        GameService.resultsBase(directory: directory, wall: wall, prefix: "robot-game")
    }
}
