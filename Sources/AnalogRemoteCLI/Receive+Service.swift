#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import BoardProtocol
import ConfigFile
import Console
import ControlPlane
import Receiver
import SystemIO

extension Receive {
    /// Under systemd (`Type=notify`, `WatchdogSec=`, `ExecReload=` SIGHUP): the notify socket, the
    /// reloader, and, in debug builds only, the test hook `ANALOG_REMOTE_TEST_STALL_AFTER_MS=N` (the
    /// receive loop stops serving N ms after start, so a test sees the watchdog keep-alives stop); a
    /// release build never reads it.
    func superviseAsService(_ configuration: inout ReceiverConfiguration) throws(CommandFailure) {
        do {
            configuration.notifier = try ServiceNotifier.fromEnvironment()
        } catch {
            throw CommandFailure("cannot open the service manager's notify socket: \(error)", kind: .failed)
        }
        #if DEBUG
        if let text = getenv("ANALOG_REMOTE_TEST_STALL_AFTER_MS").map({ String(cString: $0) }), let ms = Int(text), ms >= 0 {
            configuration.stallAfter = .milliseconds(ms)
        }
        #endif
        // Benchmark hook (BENCHMARKS.md): the drain pacing's pause in µs, 0 = off, to compare
        // both ways with the same binary. Not an option: there is no reason to tune it in use.
        if let text = getenv("ANALOG_REMOTE_BENCH_DRAIN_PAUSE_US").map({ String(cString: $0) }), let us = Int(text), (0...10_000).contains(us) {
            configuration.drainPause = .microseconds(us)
        }
        // Benchmark hook: the rate (datagrams/s) from which drains are paced, to compare pacing
        // rules with the same binary (2000 with a 1 ms pause is close to the older fixed rule).
        if let text = getenv("ANALOG_REMOTE_BENCH_BUSY_RATE").map({ String(cString: $0) }), let rate = Int(text), (1...1_000_000).contains(rate) {
            configuration.busyRate = Double(rate)
        }
        // Benchmark hook (BENCHMARKS.md "Classroom"): judge the failsafe by read time, as before
        // arrival stamps, to measure what the stamps change. Not an option.
        if let text = getenv("ANALOG_REMOTE_BENCH_NO_ARRIVAL_STAMPS").map({ String(cString: $0) }), text == "1" {
            configuration.arrivalStamps = false
        }
        // systemd's RuntimeDirectory= (/run/analog-remote): each reload leaves its receipt there
        // for `analog-remote reload`, the unit's ExecReload=, which waits on it.
        if let runtime = getenv("RUNTIME_DIRECTORY").map({ String(cString: $0) })?.split(separator: ":").first {
            do {
                configuration.reloadReceipts = try SafeDirectory(String(runtime), create: false)
            } catch {
                StandardError.write("analog-remote: warning: \(error); systemctl reload will wait for a receipt that never comes\n")
            }
        }
        let running = settings
        configuration.reloader = { (board: BoardResolution?) throws(CommandFailure) -> ReceiverReload in
            try Self.reread(comparedWith: running, board: board)
        }
    }

    /// What a restart would change, compared on reload.
    struct Settings: Equatable, Sendable {
        var values: [String: String]
    }

    var settings: Settings {
        Settings(values: [
            "port": "\(port)", "board": board, "accept": accept.rawValue, "pairing-code": pairingCode ?? "",
            "teacher-key": teacherKey ?? "", "failsafe-ms": "\(failsafeMs)", "session": session, "name": name ?? "",
            "expected-rate": "\(expectedRate)", "no-advertise": "\(noAdvertise)", "trace-board": "\(traceBoard)",
            "profile": profile.rawValue, "secret": secret ?? "", "reclaim-s": "\(reclaimS)",
            "secret-file": secretFile ?? "", "teacher-key-file": teacherKeyFile ?? "", "state-dir": stateDir ?? "",
        ])
    }

    /// The configuration as it is now: the same command line over the config file read again.
    /// The mapping is decided as at start-up (`--profile`, the file's `profile`, the probe) for
    /// the board in use; a mapping that would move the board link's addresses (motors, LEDs,
    /// buzzer: the safe state written on reconnect) is kept for a restart.
    static func reread(comparedWith running: Settings, board: BoardResolution?) throws(CommandFailure) -> ReceiverReload {
        let fresh: Receive
        do {
            let resolved = try ConfigFiles.resolve(Array(CommandLine.arguments.dropFirst()))
            guard let parsed = try AnalogRemote.parseAsRoot(resolved.arguments) as? Receive else {
                throw CommandFailure("the command line is no longer a receive command", kind: .badArgument)
            }
            fresh = parsed
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure(AnalogRemote.message(for: error), kind: .badConfiguration)
        }
        var plan = BoardPlan(choice: fresh.profile)
        if let map = fresh.map {
            do {
                plan.document = try MappingFile.document(path: map)
            } catch {
                throw CommandFailure(error.description, kind: .badConfiguration)
            }
        }
        if let conflict = plan.conflict { throw CommandFailure(conflict, kind: .badConfiguration) }
        var restart: [String] = []
        let mapping: Mapping
        if let board {
            switch plan.resolve(board.identity, device: fresh.board) {
            case .success(let resolved) where resolved.profile == board.profile:
                mapping = resolved.mapping
            case .success:
                mapping = board.mapping
                restart.append("map (the motor, LED or buzzer addresses)")
            case .failure(let refusal):
                throw CommandFailure(refusal.reason, kind: .badConfiguration)
            }
        } else {
            let kind = plan.decidedProfile ?? .motors
            do {
                mapping = try plan.document?.mapping(for: kind) ?? .default(for: kind)
            } catch {
                throw CommandFailure(error.description, kind: .badConfiguration)
            }
        }
        let now = fresh.settings.values
        let changed = now.keys.sorted().filter { now[$0] != running.values[$0] }
        return ReceiverReload(mapping: mapping, needsRestart: changed + restart)
    }
}
