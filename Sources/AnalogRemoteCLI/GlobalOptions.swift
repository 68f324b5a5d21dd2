#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Console
import ErrorReporting
import Logging
import SystemIO

/// Options every long-running subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "No live status line (log lines still go to stderr).")
    var quiet = false

    @Option(help: "Least severe log level shown: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(help: "Log line format on stderr: text or json.")
    var logFormat: LogFormat = .text

    /// Installs logging and returns the status line for the command to draw on.
    func bootstrap() -> StatusLine {
        let status = StatusLine(quiet: quiet)
        ConsoleLogging.bootstrap(level: logLevel, format: logFormat, status: status)
        return status
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension LogFormat: ExpressibleByArgument {}

/// Runs a command body; a ``UserFacingError``, a role's ``CommandFailure`` or an adapter's typed
/// error (``ErrorReport``) becomes one line on stderr and its exit status. `discoveryFallback`:
/// see ``ErrorReport``.
func runReporting(discoveryFallback: String = "--peer HOST:PORT", _ body: () throws -> CommandOutcome) throws {
    let status: ExitStatus
    do {
        status = ExitStatus(try body())
    } catch {
        guard let report = ErrorReport.userFacing(error, discoveryFallback: discoveryFallback) else { throw error }
        printError("analog-remote: \(report.message)")
        throw ExitCode(report.status.rawValue)
    }
    if status != .success { throw ExitCode(status.rawValue) }
}

/// For `validate()`: a value that parses but is refused with its own exit status rather than
/// ArgumentParser's usage error — the same one line and status `runReporting` gives.
func refuse(_ error: UserFacingError) -> ExitCode {
    printError("analog-remote: \(error.message)")
    return ExitCode(error.status.rawValue)
}

func printError(_ line: String) {
    StandardError.write(line + "\n")
}
