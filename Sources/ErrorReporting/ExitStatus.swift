import SystemIO

/// The exit codes of `analog-remote`, documented in README.md ("Exit codes"). Scripts rely on
/// them: change one only together with the README. Only the CLI and this module name them:
/// roles and adapters throw ``CommandFailure`` and typed errors, mapped here.
package enum ExitStatus: Int32, Sendable {
    /// Finished, or stopped on request (EOF, SIGINT, SIGTERM, `q`).
    case success = 0
    /// A runtime failure not covered below; also a receiver's `deny` of a controller and a
    /// stop-all that not every receiver took.
    case failure = 1
    /// A configuration file or option value is wrong (mapping, controller config, script file).
    case badConfiguration = 2
    /// A device could not be opened or was lost for good: board, gamepad, terminal.
    case deviceUnavailable = 3
    /// The network refused: a port in use, a host name that does not resolve.
    case networkUnavailable = 4
    /// No mDNS responder (avahi-daemon) is reachable for discovery.
    case noMDNSDaemon = 5
    /// Several receivers match and none was chosen (the list is printed).
    case ambiguousReceiver = 6
    /// Arguments did not parse (ArgumentParser's EX_USAGE).
    case usage = 64
    /// A command that is a program of its own is not installed or cannot run (`web` without
    /// analog-remote-web): the shells' "command not found".
    case notInstalled = 127
}

/// An error meant for the person at the terminal: one line that says what is wrong and how to
/// fix it, and the exit status it ends the program with.
package struct UserFacingError: Error, CustomStringConvertible, Sendable {
    package let message: String
    package let status: ExitStatus

    package init(_ message: String, status: ExitStatus) {
        self.message = message
        self.status = status
    }

    package var description: String { message }
}

extension ExitStatus {
    /// The exit status for each kind of ``CommandFailure``.
    package init(_ kind: CommandFailure.Kind) {
        switch kind {
        case .failed: self = .failure
        case .badConfiguration: self = .badConfiguration
        case .deviceUnavailable: self = .deviceUnavailable
        case .networkUnavailable: self = .networkUnavailable
        case .noMDNSResponder: self = .noMDNSDaemon
        case .ambiguousReceiver: self = .ambiguousReceiver
        case .badArgument: self = .usage
        }
    }

    /// A command that ran to its end: done is success, incomplete is a failure it has reported.
    package init(_ outcome: CommandOutcome) {
        self = outcome == .done ? .success : .failure
    }
}

extension UserFacingError {
    /// A role's failure as it is printed: its own line, the exit status of its kind.
    package init(_ failure: CommandFailure) {
        self.init(failure.message, status: ExitStatus(failure.kind))
    }
}
