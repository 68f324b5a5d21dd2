#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Console
import ErrorReporting
import Logging
import SystemIO

/// Options every long-running subcommand takes (of `analog-remote` and of `analog-remote-web`).
package struct GlobalOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "No live status line (log lines still go to stderr).")
    package var quiet = false

    @Option(help: "Least severe log level shown: trace, debug, info, notice, warning, error, critical.")
    package var logLevel: Logger.Level = .info

    @Option(help: "Log line format on stderr: text or json.")
    package var logFormat: LogFormat = .text

    package init() {}

    /// Installs logging and returns the status line for the command to draw on.
    package func bootstrap() -> StatusLine {
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
package func runReporting(discoveryFallback: String = "--peer HOST:PORT", _ body: () throws -> CommandOutcome) throws {
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
package func refuse(_ error: UserFacingError) -> ExitCode {
    printError("analog-remote: \(error.message)")
    return ExitCode(error.status.rawValue)
}

package func printError(_ line: String) {
    StandardError.write(line + "\n")
}

/// One error style for the executables' roots: a usage error is one line, `analog-remote: WHAT`,
/// exit 64, like every other error of this program (help, --version and errors from run() keep
/// ArgumentParser's handling: they print what they must and carry their exit code).
package func failCommand<Command: ParsableCommand>(_ error: any Error, as command: Command.Type) -> Never {
    if Command.exitCode(for: error) == ExitCode(ExitStatus.usage.rawValue), !(error is ExitCode) {
        let message = Command.message(for: error).split(separator: "\n").first.map(String.init) ?? "bad arguments"
        StandardError.write("analog-remote: \(message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message)\n")
        Command.exit(withError: ExitCode(ExitStatus.usage.rawValue))
    }
    Command.exit(withError: error)
}
