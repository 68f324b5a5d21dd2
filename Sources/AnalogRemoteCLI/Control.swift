import ArgumentParser
import ControlPlane
import Controller
import Discovery
import RemoteWire
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
            gamepad:  left stick tilts, d-pad up/right trigger forward, d-pad down/left trigger backward, \
            south/east buttons A/B; waits for a pad and survives unplugging (README "Gamepads")

            --session ID finds the receiver with DNS-SD (needs avahi-daemon; exit 5 without) and \
            follows it when it restarts on another address or port. Several receivers and no \
            --receiver: asks on a terminal, else lists them and exits 6.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Where to send: HOST:PORT, IPv4:PORT or [IPv6]:PORT.", valueName: "host:port"))
    var peer: String?

    @Option(help: ArgumentHelp("Find the receiver by session ID (DNS-SD) instead of --peer, and follow it when it moves.",
                               valueName: "id"))
    var session: String?

    @Option(help: ArgumentHelp("With --session: the receiver to drive (its name or peer id); default: the only one.",
                               valueName: "name"))
    var receiver: String?

    @Option(help: ArgumentHelp("Where states come from: \(InputSpec.forms). Default: keyboard when stdin is a terminal, else stdin.",
                               valueName: "source"))
    var input: InputSpec?

    @Option(help: "Packets per second while the state does not change (1…1000; default 50, or with --session what the receiver asks for); changes are sent at once.")
    var rate: Double?

    @Option(help: ArgumentHelp("Controller config file (TOML): these options as keys (the command line overrides them) and the gamepad mapping in its [gamepad] table (README \"Config files\", \"Gamepads\"). Default: $XDG_CONFIG_HOME/analog-remote/control.toml when it exists.",
                               valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Display name shown to the receiver and in the session (default: host name).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Pairing code of a receiver started with --accept paired (shown on its screen).", valueName: "code"))
    var pair: String?

    @Option(help: ArgumentHelp("The robot's secret, for a receiver started with --accept secret: the 12 words it shows (quote them; case, hyphens and cutting each word to 4 letters do not matter). Every datagram is then authenticated.", valueName: "words"))
    var secret: String?

    func validate() throws {
        switch (peer, session) {
        case (nil, nil):
            throw ValidationError("say which receiver to drive: --peer HOST:PORT, or --session ID to find it on the LAN.")
        case (.some, .some):
            throw ValidationError("--peer and --session exclude each other: give one of them.")
        case (let peer?, nil):
            guard SocketAddress.split(peer) != nil else {
                throw ValidationError("--peer \(peer): expected HOST:PORT, IPv4:PORT or [IPv6]:PORT with a port 1…65535.")
            }
            if receiver != nil { throw ValidationError("--receiver needs --session (with --peer the receiver is given).") }
        case (nil, let session?):
            do { _ = try SessionID(session) } catch { throw ValidationError("--session: \(error)") }
            if let receiver, receiver.isEmpty { throw ValidationError("--receiver must not be empty") }
        }
        if let rate {
            guard rate.isFinite, rate >= Double(SendRate.range.lowerBound), rate <= Double(SendRate.range.upperBound) else {
                throw ValidationError("--rate \(rate): must be between 1 and 1000 packets per second.")
            }
        }
        try validateClassroom()
    }

    func run() throws {
        try runReporting {
            let status = global.bootstrap()
            var options = ControlOptions(peer: peer ?? "", input: input, rate: rate ?? Double(SendRate.standardHz), configPath: config)
            if let session {
                options.session = SessionTarget(session: try SessionID(session), receiver: receiver, requestedRate: rate)
            }
            options.displayName = name
            options.pairingCode = pair
            if let secret, case .success(let parsed) = RobotSecret.parse(secret) { options.secret = parsed }
            return try ControlCommand.run(options, status: status)
        }
    }
}

extension InputSpec: ExpressibleByArgument {}
