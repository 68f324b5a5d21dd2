/// Where controller states come from: stdin lines, a script, the keyboard, (later) a gamepad.
///
/// The send loop runs on one thread and polls every source's ``descriptor`` together with the
/// signal descriptor and the resend deadline, so a source never blocks and never needs its own
/// thread. Adding a source means: conform to this protocol, and add a case to ``InputSpec`` that
/// builds it. The loop calls, in order:
///
/// 1. ``start(now:)`` once, before the first packet: enter raw mode, note the start time, and
///    return the initial state if the source knows one (it becomes the first packet).
/// 2. ``read(now:)`` whenever ``descriptor`` is readable or hung up, or ``nextDeadline`` has
///    passed. It must not block: read what is there (one `read(2)` after poll said readable does
///    not block), and return the events in order. Report `.end` exactly once; after it the loop
///    stops calling ``read(now:)``.
/// 3. ``close()`` on every way out, including errors: undo what ``start(now:)`` changed (terminal
///    modes). It must be idempotent.
///
/// Sources are used from the loop's thread only, so they need not be `Sendable`.
public protocol InputSource: AnyObject {
    /// What the status line calls this source: `keyboard`, `stdin`, `script:demo.script`.
    var name: String { get }
    /// The descriptor to poll for readability, or nil for a source driven by time alone.
    var descriptor: Int32? { get }
    /// When ``read(now:)`` must be called even without input (a key's release timeout, the next
    /// script line); nil = only on input.
    var nextDeadline: ContinuousClock.Instant? { get }

    func start(now: ContinuousClock.Instant) throws -> [InputEvent]
    func read(now: ContinuousClock.Instant) throws -> [InputEvent]
    func close()
}

extension InputSource {
    public var nextDeadline: ContinuousClock.Instant? { nil }
    public func start(now: ContinuousClock.Instant) throws -> [InputEvent] { [] }
    public func close() {}
}
