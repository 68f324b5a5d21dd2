#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The signal policy of every long-running command, written once:
///
/// - SIGINT (Ctrl-C) and SIGTERM (`kill`, `systemctl stop`) ask the command to stop. It stops
///   gracefully: what keeps the robot safe happens first (a controller sends neutral, a receiver
///   writes the safe state, an announcement is withdrawn), then its summary, then exit 0 —
///   stopping on request is success (README "Exit codes").
/// - SIGHUP stops a command that lives in a terminal (``terminal``: `control`, whose terminal
///   hung up); a receiver takes it as "reload" (`systemctl reload`) and watches it itself; the
///   other commands leave it at its default (the process ends, as any program's would).
/// - SIGPIPE is ignored by commands that must get their safe state out through a closed pipe.
///
/// Once a signal is watched its default action is gone for good (``SignalWatcher``), so a
/// command that watches one must end by itself when it arrives.
package enum StopSignals {
    /// SIGINT and SIGTERM: every long-running command.
    package static let standard: [Int32] = [SIGINT, SIGTERM]
    /// Also SIGHUP, for a command tied to its terminal.
    package static let terminal: [Int32] = [SIGINT, SIGTERM, SIGHUP]
}

/// The lifecycle of one long-running command: the stop signals (``StopSignals``), a mailbox for
/// events from other threads, and one wait that covers them, the command's own descriptors and
/// its next deadline. The loop around it stays the command's:
///
/// ```swift
/// let runtime = try CommandRuntime<BrowserEvent>()
/// while true {
///     let wake = try runtime.wait([socket], until: machine.nextDeadline)
///     if wake.stop != nil { break }          // graceful: finish what is safe, then return
///     for event in wake.events { … }
///     if wake.ready[0].contains(.readable) { … }
/// }
/// ```
package final class CommandRuntime<Event: Sendable>: Sendable {
    /// Post events here from any thread; ``wait(_:until:)`` hands them over.
    package let mailbox: EventMailbox<Event>
    private let signals: SignalWatcher

    /// Watches `stopOn` from now on (see ``StopSignals`` for which to pass).
    package init(stopOn: [Int32] = StopSignals.standard, mailboxCapacity: Int = 256) throws(SystemError) {
        signals = try SignalWatcher(signals: stopOn)
        mailbox = try EventMailbox(capacity: mailboxCapacity)
    }

    /// What ended a wait.
    package struct Wake {
        /// The stop signal, once one has arrived (it stays set).
        package var stop: Int32?
        /// The events posted since the last wait, oldest first.
        package var events: [Event]
        /// For each descriptor passed to ``CommandRuntime/wait(_:until:)``, in order, what it is ready for.
        package var ready: [Poller.Events]
        /// The deadline given has passed.
        package var deadlinePassed: Bool
    }

    /// The stop signal caught so far, or nil.
    package var stop: Int32? { signals.signal }

    /// Readable once a stop signal has arrived, for a loop that waits inside a library call.
    package var stopDescriptor: Int32 { signals.readableDescriptor }

    /// Waits until a stop signal, an event, one of `descriptors` or `deadline` (nil: none).
    /// Returns at once when a stop signal has already arrived.
    package func wait(_ descriptors: [(fd: Int32, events: Poller.Events)] = [],
                     until deadline: ContinuousClock.Instant?) throws(SystemError) -> Wake {
        let all = [(signals.readableDescriptor, Poller.Events.readable), (mailbox.descriptor, .readable)] + descriptors
        let ready = try Poller.wait(all, until: deadline)
        return Wake(stop: signals.signal, events: mailbox.drain(), ready: Array(ready.dropFirst(2)),
                    deadlinePassed: deadline.map { ContinuousClock.now >= $0 } ?? false)
    }
}
