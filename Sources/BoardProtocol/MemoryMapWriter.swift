/// Keeps a board's memory map equal to what its owner wants, over a link slower than the input:
/// a value-type state machine, the caller does the I/O.
///
/// - *desired*: what the owner asked for last (``setDesired(_:)`` merges; the latest value of an
///   address wins). *confirmed*: what the board acknowledged with a prompt.
/// - ``nextCommand()`` sends only addresses whose desired value differs from the confirmed one
///   (or is unknown), one contiguous run per `W`. At most one command is outstanding; a value
///   that changes several times while a command is on the wire is sent once, with its latest
///   value: intermediate states are skipped, never queued.
/// - Runs are chosen round-robin from the address after the last one written, so a fast-changing
///   address (motors) cannot starve another (LEDs). A contiguous block of changed addresses is
///   never split by that cursor: both motors change in one `W`, or the robot would spin for the
///   time of one command (16 ms at 9600 baud) on its way from "stopped" to "forward".
/// - After ``connected()`` (every open, first or re-) the profile's safe state is written before
///   anything else, whatever the desired values; then the desired values follow.
public struct MemoryMapWriter: Sendable {
    public let profile: MemoryMapProfile
    public private(set) var desired: [UInt8: UInt8] = [:]
    public private(set) var confirmed: [UInt8: UInt8] = [:]
    public private(set) var isLinkUp = false

    private struct Run: Sendable {
        let address: UInt8
        let bytes: [UInt8]
        let isSafeState: Bool
        var command: BoardCommand { .write(address: address, bytes: bytes) }
    }
    private var outstandingRun: Run?
    private var safePending: [UInt8: UInt8] = [:]
    private var cursor = 0

    public init(profile: MemoryMapProfile) {
        self.profile = profile
    }

    /// The command on the wire, if any.
    public var outstanding: BoardCommand? { outstandingRun?.command }
    /// True until the safe state written after the last ``connected()`` is confirmed.
    public var isWritingSafeState: Bool { !safePending.isEmpty }
    /// Link up, safe state written, nothing outstanding, every desired value confirmed.
    public var isSettled: Bool {
        isLinkUp && outstandingRun == nil && safePending.isEmpty && dirtyAddresses().isEmpty
    }

    /// Merges `values` into the desired map. Addresses outside the profile's map are ignored
    /// (the board would drop them) and returned.
    @discardableResult
    public mutating func setDesired(_ values: [UInt8: UInt8]) -> [UInt8] {
        var ignored: [UInt8] = []
        for (address, value) in values {
            if Int(address) < profile.size { desired[address] = value } else { ignored.append(address) }
        }
        return ignored.sorted()
    }

    /// True when the board has confirmed every one of `values`.
    public func isConfirmed(_ values: [UInt8: UInt8]) -> Bool {
        values.allSatisfy { confirmed[$0.key] == $0.value }
    }

    /// The link was opened (first time or again): nothing on the board is known any more, and the
    /// safe state goes first.
    public mutating func connected() {
        isLinkUp = true
        confirmed = [:]
        outstandingRun = nil
        safePending = profile.safeState.filter { Int($0.key) < profile.size }
        cursor = 0
    }

    /// The link is gone: nothing outstanding, nothing known.
    public mutating func disconnected() {
        isLinkUp = false
        confirmed = [:]
        outstandingRun = nil
        safePending = [:]
    }

    /// The next `W` to send, or nil (link down, a command outstanding, nothing to do). The
    /// returned command is outstanding until ``succeeded()`` or ``failed()``.
    public mutating func nextCommand() -> BoardCommand? {
        guard isLinkUp, outstandingRun == nil else { return nil }
        let run: Run
        if !safePending.isEmpty {
            let addresses = safePending.keys.sorted()
            let span = Self.contiguousRun(in: addresses, from: 0)
            run = Run(address: addresses[0], bytes: span.map { safePending[$0]! }, isSafeState: true)
        } else {
            let dirty = dirtyAddresses()
            guard !dirty.isEmpty else { return nil }
            var start = dirty.firstIndex { Int($0) >= cursor } ?? 0
            while start > 0, dirty[start - 1] &+ 1 == dirty[start] { start -= 1 }
            let span = Self.contiguousRun(in: dirty, from: start)
            run = Run(address: span[0], bytes: span.map { desired[$0]! }, isSafeState: false)
            cursor = Int(span[span.count - 1]) + 1
        }
        outstandingRun = run
        return run.command
    }

    /// The outstanding command was acknowledged (its prompt arrived).
    public mutating func succeeded() {
        guard let run = outstandingRun else { return }
        outstandingRun = nil
        for (offset, value) in run.bytes.enumerated() {
            let address = run.address + UInt8(offset)
            confirmed[address] = value
            if run.isSafeState { safePending[address] = nil }
        }
    }

    /// The outstanding command failed or timed out: the board may or may not hold its values, so
    /// they are unknown and will be sent again (with whatever value is desired by then).
    public mutating func failed() {
        guard let run = outstandingRun else { return }
        outstandingRun = nil
        for offset in run.bytes.indices { confirmed[run.address + UInt8(offset)] = nil }
    }

    /// Sorted addresses whose desired value is not confirmed.
    func dirtyAddresses() -> [UInt8] {
        desired.filter { confirmed[$0.key] != $0.value }.keys.sorted()
    }

    /// The contiguous addresses starting at `sorted[start]`, at most one line's worth.
    static func contiguousRun(in sorted: [UInt8], from start: Int) -> [UInt8] {
        var run = [sorted[start]]
        var i = start + 1
        while i < sorted.count, sorted[i] == run[run.count - 1] &+ 1, run.count < BoardCommand.maximumDataBytes {
            run.append(sorted[i])
            i += 1
        }
        return run
    }
}
