import ArgumentParser
import CommandSupport
import ControlPlane
import Controller
import Discovery
import RemoteWire
import SystemIO

struct Control: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Read a tilt and buttons (keyboard, stdin, script, gamepad, MIDI) and send them to a receiver.",
        discussion: """
            Sends the 8-byte state packet over UDP at once on every change and again every period \
            (--rate). On every way out (end of input, q, SIGINT, SIGTERM, SIGHUP, a lost device) it \
            sends the neutral state (angle 0, no buttons) three times before exiting.

            stdin:    ANGLE BUTTONS per line, e.g. `0.3 forward+a`, `-0.1 0x2`, `0 none`
            script:   T_MS ANGLE BUTTONS per line, T_MS = ms since the start
            keyboard: ←/→ steer (back to centre on release; --steer latch keeps the tilt), -/+ tilt scale, \
            space stops (neutral), 0 centres, W/↑ S/↓ drive, A, B, Ctrl-Z suspends, q quits
            gamepad:  left stick tilts, d-pad up/right trigger forward, d-pad down/left trigger backward, \
            south/east buttons A/B; Start + Back together quit (so does q on the terminal); waits for a \
            pad and survives unplugging (docs/gamepads.md)
            midi:     a MIDI keyboard (midi, midi:CLIENT:PORT, midi:NAME, midi:hw:C,D,S, \
            midi-serial:PATH[@BAUD]): pitch bend tilts, C4 forward, D4 backward, E4 A, F4 B, \
            C3+E3+G3 together A+B; `analog-remote midi-inputs` lists ports (docs/midi.md)

            --session ID finds the receiver with DNS-SD (needs avahi-daemon; exit 5 without) and \
            follows it when it restarts on another address or port. Several receivers and no \
            --receiver: asks on a terminal, else lists them and exits 6.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup(title: "Record and replay") var recording: RecordOptions

    @Option(help: ArgumentHelp("Where to send: HOST, IPv4 or [IPv6], with :PORT when the receiver is not on the default port \(ReceiverPort.standard).",
                               valueName: "host[:port]"))
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

    @Option(help: ArgumentHelp("Controller config file (TOML): these options as keys (the command line overrides them), the gamepad mapping in its [gamepad] table, the MIDI mapping in [midi] (docs/config.md, docs/gamepads.md, docs/midi.md). Default: $XDG_CONFIG_HOME/analog-remote/control.toml when it exists.",
                               valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("Display name shown to the receiver and in the session (default: host name).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Pairing code of a receiver started with --accept paired (shown on its screen).", valueName: "code"))
    var pair: String?

    @Option(help: ArgumentHelp("The robot's secret, for a receiver started with --accept secret: the 12 words it shows (quote them; case, hyphens and cutting each word to 4 letters do not matter). Every datagram is then authenticated.", valueName: "words"))
    var secret: String?

    @Option(help: ArgumentHelp("Read the robot's secret (its 12 words) from this file, which only its owner may read (chmod 600): unlike --secret, it is not visible to other users in ps.",
                               valueName: "file"))
    var secretFile: String?

    @Option(help: ArgumentHelp("Keyboard steering: `centre` = releasing ←/→ returns the tilt to 0 (default); `latch` = the tilt stays until space or 0.",
                               valueName: "centre|latch"))
    var steer: KeyboardModel.Steering = .centre

    @Flag(help: "Send only the 8-byte state packets, no hello or pings (for receivers that predate control messages). The robot's state is then not shown, and no answer is expected.")
    var plain = false

    func validate() throws {
        switch (peer, session) {
        case (nil, nil):
            throw ValidationError("say which receiver to drive: --peer HOST:PORT, or --session ID to find it on the LAN.")
        case (.some, .some):
            throw ValidationError("--peer and --session exclude each other: give one of them.")
        case (let peer?, nil):
            guard SocketAddress.withDefaultPort(peer, port: ReceiverPort.standard) != nil else {
                throw ValidationError("--peer \(peer): expected HOST, IPv4 or [IPv6], optionally with :PORT (1…65535; default \(ReceiverPort.standard)).")
            }
            if receiver != nil { throw ValidationError("--receiver needs --session (with --peer the receiver is given).") }
        case (nil, let session?):
            do { _ = try SessionID(session) } catch { throw ValidationError("--session: \(error)") }
            if let receiver, receiver.isEmpty { throw ValidationError("--receiver must not be empty") }
        }
        if let rate {
            guard rate.isFinite, rate >= Double(SendRate.range.lowerBound), rate <= Double(SendRate.range.upperBound) else {
                throw ValidationError("--rate \(rate): must be between \(SendRate.range.lowerBound) and \(SendRate.range.upperBound) packets per second.")
            }
        }
        try validateClassroom()
        if recording.replayOptionsGiven {
            guard case .replay? = input else { throw ValidationError("--speed, --loop, --from and --to go with --input replay:FILE.") }
        }
    }

    func run() throws {
        try runReporting {
            // Before any thread starts (inherited): the minimum gap's hold is 1 ms, not 1 ms + 50 µs.
            TimerSlack.tighten()
            let status = global.bootstrap()
            let target = peer.flatMap { SocketAddress.withDefaultPort($0, port: ReceiverPort.standard) } ?? ""
            var options = ControlOptions(peer: target, input: input, rate: rate ?? Double(SendRate.standardHz), configPath: config)
            if let session {
                options.session = SessionTarget(session: try SessionID(session), receiver: receiver, requestedRate: rate)
            }
            options.displayName = name
            options.pairingCode = pair
            options.secret = try SecretArguments.secret(inline: secret, file: secretFile)
            options.plain = plain
            options.steering = steer
            options.recordPath = recording.record
            options.replay = recording.replay
            return try ControlCommand.run(options, status: status)
        }
    }
}

extension InputSpec: ExpressibleByArgument {}
extension KeyboardModel.Steering: ExpressibleByArgument {}
