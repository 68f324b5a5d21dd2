/// Where controller states come from: stdin lines, a script, the keyboard, a gamepad.
///
/// The send loop runs on one thread and polls every source's ``descriptor`` together with the
/// signal descriptor and the resend deadline, so a source never blocks and needs no thread of
/// its own. Adding a source means: conform to this protocol, and add a case to ``InputSpec``
/// that builds it (``ControlCommand/makeSource(_:)``). The loop calls, in order:
///
/// 1. ``start(now:)`` once, before the first packet: enter raw mode, note the start time, and
///    return the initial state if the source knows one (it becomes the first packet). Throw a
///    `CommandFailure` if the device cannot be used (nothing has been sent yet).
/// 2. ``read(now:)`` whenever ``descriptor`` is readable or hung up. It must not block: one
///    `read(2)` after poll said readable does not. Return the events in order.
/// 3. ``deadlinePassed(now:)`` whenever ``nextDeadline`` has passed (a key's release timeout,
///    the next script line). No input is waiting then: do not read.
/// 4. ``close()`` on every way out, including errors: undo what ``start(now:)`` changed
///    (terminal modes). It must be idempotent.
///
/// Report `.end` exactly once; after it the loop stops polling and calling the source. A lost
/// device that cannot come back (a terminal that hung up) is `.end(.deviceLost(…))`, not a
/// thrown error, so that the neutral packets still go out. A gamepad is different: unplugging
/// is a neutral `.state` and the source waits for the pad to return (``GamepadInput``).
///
/// Sources are used from the loop's thread only, so they need not be `Sendable`.
package protocol InputSource: AnyObject {
    /// What the status line calls this source: `keyboard`, `stdin`, `script:demo.script`.
    var name: String { get }
    /// The descriptor to poll for readability, or nil for a source driven by time alone.
    var descriptor: Int32? { get }
    /// When ``deadlinePassed(now:)`` is due; nil = never (only input matters).
    var nextDeadline: ContinuousClock.Instant? { get }

    func start(now: ContinuousClock.Instant) throws -> [InputEvent]
    func read(now: ContinuousClock.Instant) -> [InputEvent]
    func deadlinePassed(now: ContinuousClock.Instant) -> [InputEvent]
    func close()
    /// A second descriptor to poll (a gamepad's terminal keys); ``read(now:)`` is called when
    /// either is readable.
    var secondDescriptor: Int32? { get }
    /// The process is about to stop (Ctrl-Z, SIGTSTP): give the terminal back.
    func suspend()
    /// The process continued (SIGCONT): take the terminal again; the events to apply.
    func resume(now: ContinuousClock.Instant) -> [InputEvent]
}

extension InputSource {
    package var nextDeadline: ContinuousClock.Instant? { nil }
    package func start(now: ContinuousClock.Instant) throws -> [InputEvent] { [] }
    package func read(now: ContinuousClock.Instant) -> [InputEvent] { [] }
    package func deadlinePassed(now: ContinuousClock.Instant) -> [InputEvent] { [] }
    package func close() {}
    package var secondDescriptor: Int32? { nil }
    package func suspend() {}
    package func resume(now: ContinuousClock.Instant) -> [InputEvent] { [] }
}
