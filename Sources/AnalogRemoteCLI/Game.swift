import ArgumentParser
import CommandSupport
import Console
import ControlPlane
import Discovery
import Logging
import ErrorReporting
import Game
import SystemIO

struct Game: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "game",
        abstract: "Host the button game: every controller in the session is a player; each press of A scores a point.",
        discussion: """
            Listens like a receiver (first stdout line `receiving on udp port N`) and is announced in the session, \
            so controllers find it as they find a robot. Every controller that says hello (`control --name NAME`) \
            is a player by its display name and gets its own points and rank back; a plain 8-byte sender is a \
            player named by its address. Up to 64 players. A point is a press of A (a hold counts once). The game \
            ends after --rounds rounds of --seconds each, or on Ctrl-C/SIGTERM; then the standings are printed \
            and written to DIR/button-game-YYYYMMDD-HHMMSS.csv and .json (--results DIR).

            With --judge RULE and one --robot per robot, the robots judge the round instead: the game \
            listens to each robot's receiver as a controller that never drives (its sensor reports, \
            Protocol.md §7.9.1; under --accept secret sealed with that robot's secret), and a robot \
            whose reports stop for 1.5 s is out. RULE is `switch` (the first robot whose switch is \
            pressed wins) or `hold:N:above|below:T:S` (the first robot whose sensor N stays above or \
            below T for S seconds wins). The round ends with a winner, when every robot is out, after \
            --seconds, or on Ctrl-C; the results go to stdout and DIR/robot-game-YYYYMMDD-HHMMSS.csv.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The session ID of the class (controllers use the same).")
    var session: String

    @Option(help: ArgumentHelp("The game's name in the session (default: \"HOST game\").", valueName: "name"))
    var name: String?

    @Option(help: "UDP port to listen on (0 = any free port; the port is printed at start-up).")
    var port: UInt16 = 0

    @Option(help: "Rounds to play, each --seconds long (1…255; more than one needs --seconds).")
    var rounds: Int = 1

    @Option(help: "Length of a round in seconds (default: until Ctrl-C).")
    var seconds: Double?

    @Option(help: ArgumentHelp("Directory for the results files (CSV and JSON).", valueName: "dir"))
    var results: String = "."

    @Flag(help: "Do not announce the game on the LAN (DNS-SD); controllers then need --peer.")
    var noAdvertise = false

    @Option(help: ArgumentHelp("A round the robots judge: `switch` (first to press its robot's switch) or `hold:N:above|below:T:S` (first to hold sensor N above/below T for S seconds). Needs --robot.", valueName: "rule"))
    var judge: String?

    @Option(help: ArgumentHelp("A robot of a judged round: [NAME=]HOST:PORT[,secret-file=PATH] (the secret file of a receiver under --accept secret). Repeat for each robot.", valueName: "robot"))
    var robot: [String] = []

    func validate() throws {
        do { _ = try SessionID(session) } catch { throw ValidationError("--session: \(error)") }
        guard (1...255).contains(rounds) else { throw ValidationError("--rounds \(rounds): give 1…255 rounds.") }
        if let seconds {
            guard seconds.isFinite, seconds >= 1, seconds <= 86_400 else {
                throw ValidationError("--seconds \(seconds): give 1…86400 seconds.")
            }
        } else if rounds > 1 {
            throw ValidationError("--rounds \(rounds) needs --seconds: how long is a round?")
        }
        if let name, name.isEmpty || name.utf8.count > 63 { throw ValidationError("--name: give 1…63 bytes of UTF-8.") }
        if let judge {
            guard RobotRound.Rule(judge) != nil else {
                throw ValidationError("--judge \(judge): give `switch` or `hold:N:above|below:T:S` (N 1…4, T 0…255, S seconds)")
            }
            guard !robot.isEmpty, robot.count <= 64 else { throw ValidationError("--judge needs 1…64 --robot") }
            guard rounds == 1 else { throw ValidationError("--judge plays one round (leave out --rounds)") }
        } else if !robot.isEmpty {
            throw ValidationError("--robot needs --judge RULE")
        }
    }

    /// `[NAME=]HOST:PORT[,secret-file=PATH]`.
    static func judgedRobot(_ spec: String) throws(UserFacingError) -> JudgedRobot {
        var parts = spec.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        var secret: RobotSecret?
        if parts.count == 2 {
            guard parts[1].hasPrefix("secret-file=") else {
                throw UserFacingError("--robot \(spec): after the address only `,secret-file=PATH` is allowed", status: .usage)
            }
            secret = try SecretArguments.secret(inline: nil, file: String(parts[1].dropFirst("secret-file=".count)))
        }
        var address = parts.removeFirst()
        var name = address
        if let eq = address.firstIndex(of: "=") {
            name = String(address[..<eq])
            address = String(address[address.index(after: eq)...])
        }
        guard !name.isEmpty, name.utf8.count <= 63 else { throw UserFacingError("--robot \(spec): give a name of 1…63 bytes", status: .usage) }
        do {
            return JudgedRobot(name: name, address: try SocketAddress.resolve(address), secret: secret)
        } catch {
            throw UserFacingError("--robot \(spec): \(error) (give HOST:PORT)", status: .usage)
        }
    }

    func run() throws {
        if let judge, let rule = RobotRound.Rule(judge) {
            try runReporting {
                var configuration = JudgeConfiguration(rule: rule, robots: try robot.map(Self.judgedRobot), session: session,
                                                       name: name ?? "\(HostName.current() ?? "class") game")
                configuration.timeLimit = seconds.map { .milliseconds(Int64(($0 * 1000).rounded())) }
                configuration.resultsDirectory = results
                _ = global.bootstrap()
                return try RobotJudgeService(configuration: configuration, logger: Logger(label: "game")).run()
            }
            return
        }
        try runReporting(discoveryFallback: "--no-advertise") {
            var configuration = GameConfiguration(session: session, name: name ?? "\(HostName.current() ?? "class") game")
            configuration.port = port
            configuration.rounds = rounds
            configuration.roundLength = seconds.map { .milliseconds(Int64(($0 * 1000).rounded())) }
            configuration.resultsDirectory = results
            configuration.advertise = !noAdvertise
            let status = global.bootstrap()
            let service = try GameService(configuration: configuration, status: status, logger: Logger(label: "game"))
            return try service.run()
        }
    }
}
