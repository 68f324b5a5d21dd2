import ArgumentParser
import Controller
import SystemIO

struct Control: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Read a tilt and buttons (keyboard, stdin, script, gamepad) and send them to a receiver.",
        discussion: """
            Sends the 8-byte state packet over UDP at once on every change and again every period \
            (--rate). On every way out (end of input, q, SIGINT, SIGTERM, SIGHUP, a lost device) it \
            sends the neutral state (angle 0, no buttons) three times before exiting.

            stdin:    ANGLE BUTTONS per line, e.g. `0.3 forward+a`, `-0.1 0x2`, `0 none`
            script:   T_MS ANGLE BUTTONS per line, T_MS = ms since the start
            keyboard: ←/→ tilt, space centres, W/↑ S/↓ drive, A, B, q quits
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Where to send: HOST:PORT, IPv4:PORT or [IPv6]:PORT.", valueName: "host:port"))
    var peer: String?

    @Option(help: ArgumentHelp("Where states come from: \(InputSpec.forms). Default: keyboard when stdin is a terminal, else stdin.",
                               valueName: "source"))
    var input: InputSpec?

    @Option(help: "Packets per second while the state does not change (1…1000); changes are sent at once.")
    var rate: Double = 50

    @Option(help: ArgumentHelp("Display name shown to the receiver and in the session (default: host name).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Pairing code of a receiver started with --accept paired (shown on its screen).", valueName: "code"))
    var pair: String?

    func validate() throws {
        guard let peer else {
            throw ValidationError("--peer HOST:PORT is required: say which receiver to drive (finding it by --session comes with discovery).")
        }
        guard SocketAddress.split(peer) != nil else {
            throw ValidationError("--peer \(peer): expected HOST:PORT, IPv4:PORT or [IPv6]:PORT with a port 1…65535.")
        }
        guard rate.isFinite, (1...1000).contains(rate) else {
            throw ValidationError("--rate \(rate): must be between 1 and 1000 packets per second.")
        }
        try validateClassroom()
    }

    func run() throws {
        try runReporting {
            let status = global.bootstrap()
            var options = ControlOptions(peer: peer ?? "", input: input, rate: rate)
            options.displayName = name
            options.pairingCode = pair
            return try ControlCommand.run(options, status: status)
        }
    }
}

extension InputSpec: ExpressibleByArgument {}
