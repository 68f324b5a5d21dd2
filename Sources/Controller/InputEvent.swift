import SystemIO
import RemoteWire

/// What an input source reports to the send loop.
package enum InputEvent: Equatable, Sendable {
    /// The whole controller state as it is now (the loop sends it only if it differs from the last).
    case state(ControllerState)
    /// The source is finished: the loop sends the neutral state three times and exits.
    case end(EndReason)
    /// A line for the person at the terminal (a bad stdin line, "kitty keyboard protocol on"),
    /// printed on stderr above the status line. Not an error: the source keeps going.
    case notice(String)
    /// The person asked to suspend (Ctrl-Z on a raw terminal): neutral, terminal back, stop.
    case suspend
}

/// Why the controller stops. Every reason ends the same way on the wire (neutral ×3); they differ
/// in the exit status and in the line printed.
package enum EndReason: Equatable, Sendable {
    /// stdin reached end of file.
    case endOfInput
    /// The script's last line was reached.
    case scriptFinished
    /// The person asked to quit (`q`, Ctrl-C or Ctrl-D in the keyboard UI).
    case quit
    /// SIGINT, SIGTERM or SIGHUP arrived.
    case signal(Int32)
    /// The input device went away (terminal hung up, read error). The text
    /// says which device and what happened, e.g. `keyboard: the terminal hung up`.
    case deviceLost(String)
    /// The receiver refused this controller (a `deny`, Protocol.md §7.4) or never answered a
    /// paired hello; the text is the line to print.
    case refused(String)

    /// What kind of failure this reason is, nil when it is a stop on request: a lost device is
    /// ``CommandFailure/Kind/deviceUnavailable``, a refusal ``CommandFailure/Kind/failed``.
    package var failureKind: CommandFailure.Kind? {
        if case .deviceLost = self { return .deviceUnavailable }
        if case .refused = self { return .failed }
        return nil
    }
}
