import ArgumentParser
import BoardProtocol
import CommandSupport
import ConfigFile
import Console
import ErrorReporting
import Receiver
import SystemIO

/// `analog-remote rest`: leaves the receiver's board at rest, for when the receiver could not
/// (the service runs it as `ExecStopPost=`, after any exit of the receiver).
struct Rest: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rest",
        abstract: "Leave the robot's board at rest (motors 0, LEDs and buzzer off), as the receiver does when it stops.",
        discussion: """
            The board's firmware has no timeout: a receiver that dies without stopping \
            (SIGKILL, a crash, a stall ended by systemd's watchdog) leaves the motors at their \
            last values. The service runs this after every exit of the receiver \
            (ExecStopPost=); run it by hand after killing a receiver.

            It reads the board, profile and map from the receiver's config file (the same \
            file receive reads, checked the same way), opens the board as the receiver does \
            (one probe), writes the mapping's rest values and the profile's safe state, and \
            exits 0 once the board has confirmed them, printing one line. Otherwise one line \
            on stderr: exit 3 when the board cannot be opened or did not confirm in time; \
            exit 2 for a bad config or a board the mapping does not fit.

            A board another analog-remote process drives (a running receiver) is not touched: \
            exit 3, nothing written — a receiver that is alive rests the board itself when \
            it stops (systemctl stop analog-remote). Stop or kill it first, then run rest. \
            `--board sim` is the simulated board inside a receiver's own process: nothing to do.
            """)

    @Option(help: ArgumentHelp("The board, as receive takes it: `serial:/dev/ttyACM0[@115200]`, `midi:hw:1,0,0`, `midi-serial:PATH[@baud]` (default: the config file's `board`).",
                               valueName: "spec"))
    var board: String?

    @Option(help: ArgumentHelp("The board's profile, as receive takes it (default: the config file's, else auto: the probe decides).",
                               valueName: "auto|stock|motors"))
    var profile: ProfileChoice = .auto

    @Option(help: ArgumentHelp("The receiver's mapping file, whose rest values are written too (default: the config file's `map`, else the profile's own mapping).",
                               valueName: "file"))
    var map: String?

    @Option(help: ArgumentHelp("The receiver's config file: its board, profile and map are used, the rest of it is checked as receive checks it. Default: \(ConfigFiles.receiveDefault) when it exists.",
                               valueName: "file"))
    var config: String?

    /// The config keys `rest` takes from the receiver's file.
    static let fileKeys: Set<String> = ["board", "profile", "map"]

    func validate() throws {
        guard let board else {
            throw ValidationError("rest needs the board: --board SPEC, or `board` in the receiver's config file (--config FILE)")
        }
        if board.isEmpty { throw ValidationError("--board must not be empty") }
    }

    func run() throws {
        try runReporting {
            guard let board else { return .done }
            if board == "sim" || board.hasPrefix("sim:") {
                StandardOutput.write("nothing to rest: --board \(board) is the simulated board inside a receiver's own process, gone with it\n")
                return .done
            }
            var plan = BoardPlan(choice: profile)
            if let map {
                do {
                    plan.document = try MappingFile.document(path: map)
                } catch let error as MappingFileError {
                    throw UserFacingError(error.description, status: .badConfiguration)
                }
            }
            if let conflict = plan.conflict { throw UserFacingError(conflict, status: .badConfiguration) }
            let started = ContinuousClock.now
            let resolution = try BoardRest.rest(spec: board, plan: plan, timeout: ReceiverConfiguration().safeStateTimeout)
            let took = (ContinuousClock.now - started).components
            let ms = took.seconds * 1000 + took.attoseconds / 1_000_000_000_000_000
            let what = resolution.map { "\($0.kind.rawValue) profile, \($0.identity.summary)" } ?? "not probed"
            StandardOutput.write("board at rest: \(board) (\(what)): motors 0, LEDs and buzzer off, confirmed in \(ms) ms\n")
            return .done
        }
    }
}
