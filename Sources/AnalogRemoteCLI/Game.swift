import ArgumentParser
import Console
import Discovery
import Logging
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
    }

    func run() throws {
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
