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
    /// None: a loop inside a library (AnalogRemoteKit, a test) that only its owner stops
    /// (``LoopRunner/requestStop(as:)``); the process's signals stay the program's.
    package static let none: [Int32] = []
}

/// The one loop runner: every long-running loop (a command's, a link's, a library type's
/// thread) waits here, and only here. It owns
///
/// - **poll**: one `ppoll(2)` over the stop token, the mailbox and the loop's own descriptors;
/// - **the stop token**: the stop signals (``StopSignals``) or ``requestStop(as:)`` from any
///   thread, whichever comes first; once set it stays set, and every later wait returns at once;
/// - **the mailbox** (``mailbox``): events posted from other threads, handed over in order;
/// - **the deadline**: the loop's next one, as a ``Tick`` (nil: none — an idle loop sleeps until
///   a descriptor, an event or a stop, never on a timer);
/// - **the clock**: read once after each wait and handed over as ``Wake/now``, so a loop turn
///   compares every deadline against the same instant and reads no clock of its own.
///
/// The loop stays the caller's (its machines decide what a wake-up means):
///
/// ```swift
/// let runner = try LoopRunner<BrowserEvent>()
/// while true {
///     let wake = try runner.wait([socket], until: machine.nextDeadline)
///     if wake.stop != nil { break }          // graceful: finish what is safe, then return
///     for event in wake.events { machine.handle(event, now: wake.now) }
///     if wake.ready[0].contains(.readable) { … }
///     machine.tick(now: wake.now)
/// }
/// ```
///
/// Threads: ``mailbox``, ``requestStop(as:)`` and ``stop`` may be used from any thread;
/// ``wait(_:until:)`` from one thread at a time (the loop's).
package final class LoopRunner<Event: Sendable>: Sendable {
    /// Post events here from any thread; ``wait(_:until:)`` hands them over.
    package let mailbox: EventMailbox<Event>
    private let token: SignalWatcher

    /// Watches `stopOn` from now on (see ``StopSignals`` for which to pass).
    package init(stopOn: [Int32] = StopSignals.standard, mailboxCapacity: Int = 256) throws(SystemError) {
        token = try SignalWatcher(signals: stopOn)
        mailbox = try EventMailbox(capacity: mailboxCapacity)
    }

    /// What ended a wait.
    package struct Wake {
        /// The clock, read once when the wait ended: the loop's "now" for this turn.
        package var now: Tick
        /// The stop (a signal's number, or the one given to ``LoopRunner/requestStop(as:)``),
        /// once there is one (it stays set).
        package var stop: Int32?
        /// The events posted since the last wait, oldest first.
        package var events: [Event]
        /// For each descriptor passed to ``LoopRunner/wait(_:until:)``, in order, what it is ready for.
        package var ready: [Poller.Events]
        /// The deadline given is at or before ``now``.
        package var deadlinePassed: Bool
    }

    /// The stop so far, or nil.
    package var stop: Int32? { token.signal }

    /// Stops the loop as if `signal` had arrived (the first stop wins), from any thread, also
    /// while the loop waits: how an owner ends a loop without a real signal to the process.
    package func requestStop(as signal: Int32 = SIGTERM) { token.raise(signal) }

    /// Readable once the stop is set, for a loop that waits inside a library call.
    package var stopDescriptor: Int32 { token.readableDescriptor }

    /// The stop token itself, for a loop that still takes a ``SignalWatcher``.
    package var stopToken: SignalWatcher { token }

    /// Waits until the stop, an event, one of `descriptors` or `deadline` (nil: none).
    /// Returns at once when the stop is already set or the deadline has passed.
    package func wait(_ descriptors: [(fd: Int32, events: Poller.Events)] = [],
                      until deadline: Tick?) throws(SystemError) -> Wake {
        let count = descriptors.count + 2
        let (mail, ready) = try withUnsafeTemporaryAllocation(of: pollfd.self, capacity: count) {
            fds throws(SystemError) -> (Bool, [Poller.Events]) in
            fds.initializeElement(at: 0, to: pollfd(fd: token.readableDescriptor, events: Poller.Events.readable.rawValue, revents: 0))
            fds.initializeElement(at: 1, to: pollfd(fd: mailbox.descriptor, events: Poller.Events.readable.rawValue, revents: 0))
            for (i, d) in descriptors.enumerated() {
                fds.initializeElement(at: i + 2, to: pollfd(fd: d.fd, events: d.events.rawValue, revents: 0))
            }
            try Poller.wait(fds, nanoseconds: deadline.map { $0 - Tick.now() })
            return (fds[1].revents != 0, fds[2...].map { Poller.Events(rawValue: $0.revents) })
        }
        let now = Tick.now()
        return Wake(now: now, stop: token.signal, events: mail ? mailbox.drain() : [], ready: ready,
                    deadlinePassed: deadline.map { $0 <= now } ?? false)
    }

    /// ``wait(_:until:)`` for a loop whose machine keeps `ContinuousClock` instants (the edge
    /// where one is converted).
    package func wait(_ descriptors: [(fd: Int32, events: Poller.Events)] = [],
                      untilInstant deadline: ContinuousClock.Instant?) throws(SystemError) -> Wake {
        try wait(descriptors, until: deadline.map(Tick.init))
    }
}

extension Tick {
    /// The earliest of `deadlines` that is set (nil: none is): a loop's next wake-up.
    package static func earliest(_ deadlines: Tick?...) -> Tick? {
        var first: Tick?
        for case let d? in deadlines where first.map({ d < $0 }) ?? true { first = d }
        return first
    }
}
