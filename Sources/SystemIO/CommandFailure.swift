/// A command that could not do its job, as the role or adapter running it saw it: one line for
/// the person at the terminal (what happened and how to fix it) and the kind of thing that went
/// wrong. Nothing below the CLI knows exit codes: ErrorReporting maps ``Kind`` to one.
package struct CommandFailure: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in the terms a script reading the exit code cares about.
    package enum Kind: Sendable, Equatable, CaseIterable {
        /// A runtime failure not covered below; also a receiver's `deny` of a controller.
        case failed
        /// A configuration file or option value is wrong (mapping, controller config, script).
        case badConfiguration
        /// A device could not be opened or was lost for good: board, gamepad, terminal.
        case deviceUnavailable
        /// The network refused: a port in use, a host name that does not resolve, nobody answered.
        case networkUnavailable
        /// No mDNS responder (avahi-daemon) is reachable for discovery.
        case noMDNSResponder
        /// Several receivers match and none was chosen (the list has been printed).
        case ambiguousReceiver
        /// An argument parses but cannot be used (a session ID, a board spec).
        case badArgument
    }

    package let message: String
    package let kind: Kind

    package init(_ message: String, kind: Kind) {
        self.message = message
        self.kind = kind
    }

    package var description: String { message }
}

/// How a command that ran to its end finished; a command that could not run throws
/// ``CommandFailure`` instead.
package enum CommandOutcome: Sendable, Equatable {
    /// Done, or stopped on request (EOF, SIGINT, SIGTERM, `q`).
    case done
    /// Ran to its end without getting everything done, and has said so itself (a stop-all that
    /// not every receiver took, an interrupted benchmark): the CLI ends non-zero, adding nothing.
    case incomplete
}
