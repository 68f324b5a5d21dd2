import ArgumentParser
import BoardProtocol
import CommandSupport
import ConfigFile
import Console
import ControlPlane
import Discovery
import ErrorReporting
import Logging
import Receiver
import RemoteWire
import SystemIO

struct Receive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Take state packets from controllers and drive the board attached to this machine.",
        discussion: """
            Listens on UDP (IPv6 and IPv4). The first stdout line is `receiving on udp port N`. \
            One controller drives at a time (--accept). If the driving controller is silent for \
            --failsafe-ms the motors stop, and they run again only after a resting state (no \
            forward/backward, tilt inside the deadzone). On SIGINT/SIGTERM the board is left at \
            rest (its safe state: LEDs and buzzer off, motors 0, the drive's variables 0) and a \
            last stdout line gives the counters: \
            `summary packets=… state=… bad=… ignored=… control=… held=… applied=… writes=… failsafes=… sources=… evicted=… limited=…`.

            The receiver announces itself with DNS-SD (session --session, name --name, its \
            failsafe and expected rate in the TXT record), so `control --session ID` finds it. \
            That needs avahi-daemon: without one it exits 5 before touching the board, unless \
            --no-advertise. If the daemon dies later it keeps driving and announces again.

            The board is probed at every connect (one `R 00 55`): its profile (--profile auto: \
            a 34-byte map is the stock firmware, 36 bytes or more the motors firmware), firmware \
            id/version and map size are logged at start and shown in the status line. A mapping \
            that writes an address the board lacks is refused with one line and exit 2; the \
            first write of each address is read back, and a board that drops it is refused too.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup(title: "Black box") var blackBox: BlackBoxOptions

    @Option(help: "UDP port to listen on (default 27183, the port `control --peer HOST` sends to; 0 = any free port). The port is printed at start-up and announced.")
    var port: UInt16 = ReceiverPort.standard

    @Option(help: ArgumentHelp("Who drives: `first` = the first controller owns the robot until silent for the failsafe timeout; `any` = latest packet wins (experiments); `paired` = like first, but only controllers started with --pair CODE (the code is shown at start); `secret` = like first, but only controllers that prove they know the robot's secret (--secret WORDS), and every datagram of theirs authenticated (for classrooms; see docs/classroom.md, \"Which mode to use\").",
                               valueName: "first|any|paired|secret"))
    var accept: AcceptMode = .first

    @Option(help: ArgumentHelp("With --accept paired: the pairing code controllers must give (default: 4 random digits, shown at start).",
                               valueName: "code"))
    var pairingCode: String?

    @Option(help: ArgumentHelp("With --accept secret: the robot's secret, 12 words (default: a new random one, printed at start as words and a QR code). Unsafe: every user of this machine can read it with ps; prefer --secret-file.",
                               valueName: "words"))
    var secret: String?

    @Option(help: ArgumentHelp("With --accept secret: read the robot's secret (12 words) from this file, which only its owner may read (chmod 600); keeps the secret across restarts.",
                               valueName: "file"))
    var secretFile: String?

    @Option(help: ArgumentHelp("Obey a teacher's stop-all only when it is signed with this key. Unsafe: every user of this machine can read it with ps; prefer --teacher-key-file.",
                               valueName: "key"))
    var teacherKey: String?

    @Option(help: ArgumentHelp("Obey a teacher's stop-all only when it is signed with the key in this file (`analog-remote keygen` makes one; only its owner may read it: chmod 600).",
                               valueName: "file"))
    var teacherKeyFile: String?

    @Option(help: "Stop the motors when the driving controller is silent this long (\(FailsafeTimeout.receiverRange.lowerBound)…\(FailsafeTimeout.receiverRange.upperBound) ms).")
    var failsafeMs: Int = FailsafeTimeout.standard.milliseconds

    @Option(help: ArgumentHelp("After the failsafe stops a silent owner, keep the robot reserved for that controller this many seconds before another may take it (0…60; not with --accept any).",
                               valueName: "seconds"))
    var reclaimS: Int = ReceiverConfiguration.defaultReclaimSeconds

    @Option(help: ArgumentHelp("Mapping file (.toml or .json) from states to memory-map values; default: the profile's own mapping (config-examples/stock-map.toml, config-examples/motors-map.toml document both).",
                               valueName: "file"))
    var map: String?

    @Option(help: ArgumentHelp("The board's profile: `auto` = probe the board and take what it runs (34-byte map: stock; 36 bytes or more: motors); `stock` = the kit's published firmware (no motors: the drive shows on the LEDs and in VAR1–VAR3); `motors` = the firmware with motor bytes at 0x22/0x23. A board that lacks an address the mapping writes is refused (exit 2).",
                               valueName: "auto|stock|motors"))
    var profile: ProfileChoice = .auto

    @Option(help: ArgumentHelp("The board: `sim` (the built-in simulated board with the motors firmware; `sim:stock` for the published firmware), `serial:/dev/ttyACM0[@115200]`, `midi:hw:1,0,0` (ALSA rawmidi) or `midi-serial:PATH[@baud]`. `analog-remote boards` lists what is attached.",
                               valueName: "spec"))
    var board: String = "sim"

    @Flag(help: "Print the board's whole memory map on stdout after every change (`map <hex>`), for tests and debugging.")
    var traceBoard = false

    @Option(help: ArgumentHelp("Read the board's sensors, switch, temperature and humidity (R 07 0b) this many times a second and report them to the driver (0 = off; at most \(Int(Self.sensorRateLimit))). A read goes out only while no write waits, so driving is never held up by more than one read.",
                               valueName: "hz"))
    var sensorRate: Double = SensorPoller.defaultRate

    static let sensorRateLimit = 50.0

    @Flag(help: "Let a state change go out right behind a sensor read still on the wire, instead of waiting for the read's answer. The kit's firmware answers both in the same pass of its loop (~12 ms a pass), so a change never waits a pass behind a read; off by default: one command on the wire at a time (docs/receiver.md, \"Sensors\").")
    var writeBehindRead = false

    @Option(help: ArgumentHelp("The session ID controllers find this receiver by (any text).",
                               valueName: "id"))
    var session: String = AdvertisingOptions.defaultSession

    @Option(help: ArgumentHelp("The name announced on the LAN (default: this machine's host name). A name taken by another receiver becomes \"NAME #2\"; the log and status line show the name in use.",
                               valueName: "name"))
    var name: String?

    @Option(help: "Packets per second this receiver asks controllers to send (announced with --failsafe-ms; \(SendRate.range.lowerBound)…\(SendRate.range.upperBound)).")
    var expectedRate: Int = SendRate.standardHz

    @Flag(help: "Do not announce this receiver on the LAN (DNS-SD); controllers need --peer HOST:PORT then. Works without avahi-daemon.")
    var noAdvertise = false

    @Option(help: ArgumentHelp("Where the robot keeps its robot id (made once, announced, and what `stop-all --robot ID` aims at). Default: $STATE_DIRECTORY under systemd, else $XDG_STATE_HOME/analog-remote, else ~/.local/state/analog-remote. A directory it cannot write is said in one line, and the id then lasts one run.",
                               valueName: "dir"))
    var stateDir: String?

    @Option(help: ArgumentHelp("Config file (TOML): every option above as a key, e.g. `board = \"serial:/dev/programland\"`; the command line overrides it. Default: \(ConfigFiles.receiveDefault) when it exists. SIGHUP (systemctl reload) reads it again.",
                               valueName: "file"))
    var config: String?

    func validate() throws {
        do { _ = try SessionID(session) } catch { throw ValidationError("--session: \(error)") }
        if let name, name.isEmpty { throw ValidationError("--name must not be empty") }
        guard SendRate.range.contains(expectedRate) else { throw ValidationError("--expected-rate must be \(SendRate.range.text) packets per second") }
        guard sensorRate.isFinite, (0...Self.sensorRateLimit).contains(sensorRate) else {
            throw ValidationError("--sensor-rate \(sensorRate) is out of range; allowed: 0 (off) to \(Int(Self.sensorRateLimit)) reads a second")
        }
        // Range errors are usage errors (exit 64), found here before anything is opened or announced.
        guard FailsafeTimeout.receiverRange.contains(failsafeMs) else {
            throw ValidationError("--failsafe-ms \(failsafeMs) is out of range; allowed: \(FailsafeTimeout.receiverRange.text) milliseconds")
        }
        guard ReceiverConfiguration.reclaimRange.contains(reclaimS) else {
            throw ValidationError("--reclaim-s \(reclaimS) is out of range; allowed: 0…60 seconds")
        }
        do { _ = try classroom(loadingSecrets: false) } catch { throw ValidationError("\(error)") }
    }

    func run() throws {
        try runReporting(discoveryFallback: "--no-advertise") {
            // Before any thread starts (inherited): reply timeouts and drain pauses end on time.
            TimerSlack.tighten()
            // The mapping is read and checked before anything touches the board; which profile's
            // mapping is driven is decided by --profile, the file's `profile`, or the probe.
            var configuration = ReceiverConfiguration()
            var plan = BoardPlan(choice: profile)
            if let map {
                do {
                    let document = try MappingFile.document(path: map)
                    plan.document = document
                    configuration.mapping = try document.mapping(for: plan.decidedProfile ?? .motors)
                } catch let error as MappingFileError {
                    throw UserFacingError(error.description, status: .badConfiguration)
                }
            }
            if let conflict = plan.conflict { throw UserFacingError(conflict, status: .badConfiguration) }
            configuration.port = port
            configuration.boardName = board
            configuration.version = AnalogRemote.version
            configuration.classroom = try classroom()
            let kept = RobotIdentity.load(directory: stateDir ?? StateDirectory.path(environment: StateDirectory.processEnvironment))
            if let warning = kept.warning { StandardError.write("analog-remote: warning: \(warning)\n") }
            configuration.classroom.robotID = kept.id
            configuration.failsafe = FailsafeTimeout(milliseconds: failsafeMs)
            configuration.reclaim = .seconds(reclaimS)
            configuration.advertise = !noAdvertise
            configuration.blackBox = blackBox.settings
            try superviseAsService(&configuration)
            let status = global.bootstrap()
            let logger = Logger(label: "receive")
            let advertising = noAdvertise ? nil : ReceiverAdvertising(
                options: AdvertisingOptions(session: try SessionID(session), name: name ?? HostName.current(),
                                            timing: TimingContract(failsafe: configuration.failsafe, rateHz: expectedRate),
                                            robot: kept.id),
                logger: logger)
            let spec = board, trace = traceBoard, boardPlan = plan, sensorRate = sensorRate, behind = writeBehindRead
            let service = try ReceiverService(configuration: configuration, status: status, logger: logger,
                                              advertising: advertising) { events throws(CommandFailure) in
                try BoardSinks.open(spec: spec, plan: boardPlan, events: events, traceBoard: trace, sensorRate: sensorRate,
                                    writeBehindRead: behind)
            }
            return try service.run()
        }
    }
}

extension ProfileChoice: ExpressibleByArgument {}

extension AcceptMode: ExpressibleByArgument {}
