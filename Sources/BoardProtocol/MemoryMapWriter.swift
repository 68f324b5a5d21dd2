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
/// - A *verifying* writer (the board link's) first probes the board (``BoardIdentity/probe``,
///   one bounded `R`); the owner decides from the identity whether the board fits
///   (``identified(profile:)``) or not (``refuse(_:profile:)``: safe state only). It never sends
///   an address the probed board lacks, and reads back the first write of each address after
///   every connect: the `R` follows that `W` at once, so a board that drops a write is known one
///   command later (``Finding/dropped(address:wrote:read:)``).
package struct MemoryMapWriter: Sendable {
    /// The profile whose safe state is written first; replaced by ``identified(profile:)``.
    package private(set) var profile: MemoryMapProfile
    /// Probe the board at every connect and read back the first write of each address.
    package let verifies: Bool
    package private(set) var desired: [UInt8: UInt8] = [:]
    package private(set) var confirmed: [UInt8: UInt8] = [:]
    package private(set) var isLinkUp = false
    /// What the probe after the last ``connected()`` found (verifying writers only).
    package private(set) var identity: BoardIdentity?
    /// Set by ``refuse(_:profile:)``: only the safe state is written until the next connect.
    package private(set) var refusal: String?

    /// Something a verifying writer learnt from a reply.
    package enum Finding: Sendable, Hashable {
        /// The probe answered: decide the profile, then call ``identified(profile:)`` or ``refuse(_:profile:)``.
        case identified(BoardIdentity)
        /// The probe's reply is not a memory map (`bytes`: its body): not a firmware we know.
        case unknownBoard(BoardResponse)
        /// A read-back differs from what was written: the board dropped (or changed) the write.
        /// `read` is nil where the board has no such byte (the read stopped short).
        case dropped(address: UInt8, wrote: UInt8, read: UInt8?)
    }

    private struct Run: Sendable {
        let address: UInt8
        let bytes: [UInt8]
        let isSafeState: Bool
        var command: BoardCommand { .write(address: address, bytes: bytes) }
    }
    private enum Operation: Sendable {
        case write(Run)
        case probe
        case readBack(address: UInt8, bytes: [UInt8])
        var command: BoardCommand {
            switch self {
            case .write(let run): run.command
            case .probe: BoardIdentity.probe
            case let .readBack(address, bytes): .read(address: address, count: UInt8(bytes.count))
            }
        }
    }
    private var outstandingOperation: Operation?
    private var safePending: [UInt8: UInt8] = [:]
    private var probePending = false
    /// The probe answered; the owner has not decided yet (identified(profile:) or refuse).
    private var awaitingDecision = false
    private var readBacks: [(address: UInt8, bytes: [UInt8])] = []
    /// Addresses read back since the last connect.
    private var verified: Set<UInt8> = []
    private var cursor = 0

    package init(profile: MemoryMapProfile, verifies: Bool = false) {
        self.profile = profile
        self.verifies = verifies
    }

    /// The command on the wire, if any.
    package var outstanding: BoardCommand? { outstandingOperation?.command }
    /// True until the board is known (probe) and the safe state written after the last
    /// ``connected()`` is confirmed.
    package var isWritingSafeState: Bool {
        if probePending || awaitingDecision || !safePending.isEmpty { return true }
        if case .probe? = outstandingOperation { return true }
        return false
    }
    /// Link up, board known, safe state written, nothing outstanding, every desired value
    /// confirmed (and read back).
    package var isSettled: Bool {
        isLinkUp && outstandingOperation == nil && !isWritingSafeState && readBacks.isEmpty
            && (refusal != nil || !hasDirtyAddresses)
    }

    /// Nothing to send and nothing on the wire, on a board that is known, fits, holds its safe
    /// state and has the sensor block: a sensor read may go out now (``SensorPoller``).
    package var isIdleForReads: Bool {
        isSettled && refusal == nil && profile.hasSensorBlock && boardSize > Int(SensorBlock.lastAddress)
            && (!verifies || identity != nil)
    }

    /// Bytes the board has: the probed map size, else the profile's.
    package var boardSize: Int { min(identity?.mapSize ?? profile.size, 256) }

    /// The safe state of the current profile, on the addresses the board has; nothing for a
    /// refused board that is not a firmware we know.
    package var safeState: [UInt8: UInt8] {
        if verifies, refusal != nil, identity?.profile == nil { return [:] }
        return profile.safeState(onMapOf: boardSize)
    }

    /// Merges `values` into the desired map. A non-verifying writer ignores addresses outside
    /// the profile's map (the board would drop them) and returns them; a verifying one keeps
    /// them and never sends those the probed board lacks.
    @discardableResult
    package mutating func setDesired(_ values: [UInt8: UInt8]) -> [UInt8] {
        var ignored: [UInt8] = []
        for (address, value) in values {
            if verifies || Int(address) < profile.size { desired[address] = value } else { ignored.append(address) }
        }
        return ignored.sorted()
    }

    /// True when the board has confirmed every one of `values`.
    package func isConfirmed(_ values: [UInt8: UInt8]) -> Bool {
        values.allSatisfy { confirmed[$0.key] == $0.value }
    }

    /// The link was opened (first time or again): nothing on the board is known any more. A
    /// verifying writer probes first; then (or at once) the safe state goes first.
    package mutating func connected() {
        isLinkUp = true
        confirmed = [:]
        outstandingOperation = nil
        readBacks = []
        verified = []
        refusal = nil
        cursor = 0
        awaitingDecision = false
        if verifies {
            identity = nil
            probePending = true
            safePending = [:]
        } else {
            safePending = safeState
        }
    }

    /// The probe's board fits `profile`: write its safe state, then the desired values.
    package mutating func identified(profile: MemoryMapProfile) {
        self.profile = profile
        awaitingDecision = false
        safePending = safeState
    }

    /// The board must not be driven (`reason`: the line to report): write the safe state of
    /// `profile` on the addresses it has (so a board left lit or beeping goes quiet), then
    /// nothing until the next ``connected()``. A board that is not a firmware we know (no
    /// identity, or a map smaller than the published one) gets nothing at all.
    package mutating func refuse(_ reason: String, profile: MemoryMapProfile? = nil) {
        if let profile { self.profile = profile }
        refusal = reason
        readBacks = []
        probePending = false
        awaitingDecision = false
        safePending = safeState.filter { confirmed[$0.key] != $0.value }
    }

    /// The link is gone: nothing outstanding, nothing known.
    package mutating func disconnected() {
        isLinkUp = false
        confirmed = [:]
        outstandingOperation = nil
        safePending = [:]
        probePending = false
        awaitingDecision = false
        readBacks = []
        verified = []
    }

    /// The next command to send, or nil (link down, a command outstanding, nothing to do). The
    /// returned command is outstanding until ``completed(_:)`` (or ``succeeded()``) or ``failed()``.
    /// Order: the probe, a pending read-back (right after its write), the safe state, then
    /// changed desired values.
    package mutating func nextCommand() -> BoardCommand? {
        guard isLinkUp, outstandingOperation == nil, !awaitingDecision else { return nil }
        let operation: Operation
        if probePending {
            probePending = false
            operation = .probe
        } else if !readBacks.isEmpty {
            let next = readBacks.removeFirst()
            operation = .readBack(address: next.address, bytes: next.bytes)
        } else if !safePending.isEmpty {
            let addresses = safePending.keys.sorted()
            let span = Self.contiguousRun(in: addresses, from: 0)
            operation = .write(Run(address: addresses[0], bytes: span.map { safePending[$0]! }, isSafeState: true))
        } else {
            guard refusal == nil, verifies == false || identity != nil else { return nil }
            let dirty = dirtyAddresses()
            guard !dirty.isEmpty else { return nil }
            var start = dirty.firstIndex { Int($0) >= cursor } ?? 0
            while start > 0, dirty[start - 1] &+ 1 == dirty[start] { start -= 1 }
            let span = Self.contiguousRun(in: dirty, from: start)
            operation = .write(Run(address: span[0], bytes: span.map { desired[$0]! }, isSafeState: false))
            cursor = Int(span[span.count - 1]) + 1
        }
        outstandingOperation = operation
        return operation.command
    }

    /// The next command only if it is a changed desired value: nil while a probe, the safe state
    /// after a connect, or a read-back is due (those keep their order, one command at a time), or
    /// when ``nextCommand()`` would give nil. What a link may send behind a sensor read already on
    /// the wire (Protocol.md §4.6 rule 8); outstanding like ``nextCommand()``'s.
    package mutating func nextChange() -> BoardCommand? {
        guard isLinkUp, outstandingOperation == nil, !awaitingDecision, !probePending,
              readBacks.isEmpty, safePending.isEmpty else { return nil }
        return nextCommand()
    }

    /// The outstanding command was acknowledged (its prompt arrived) with `response`. Returns
    /// what a verifying writer learnt: the probe's identity, or a write the board did not keep
    /// (reported one command after that write: its read-back follows it at once).
    @discardableResult
    package mutating func completed(_ response: BoardResponse) -> Finding? {
        guard let operation = outstandingOperation else { return nil }
        outstandingOperation = nil
        switch operation {
        case .probe:
            guard let found = BoardIdentity(probeReply: response) else {
                awaitingDecision = true
                return .unknownBoard(response)
            }
            identity = found
            awaitingDecision = true
            return .identified(found)
        case .write(let run):
            var unverified = false
            for (offset, value) in run.bytes.enumerated() {
                let address = run.address &+ UInt8(offset)
                confirmed[address] = value
                if run.isSafeState, safePending[address] == value { safePending[address] = nil }
                if !verified.contains(address) { unverified = true }
            }
            if verifies && unverified && refusal == nil { readBacks.append((run.address, run.bytes)) }
            return nil
        case let .readBack(address, bytes):
            let read: [UInt8]
            if case .values(let values) = response { read = values } else { read = [] }
            for offset in bytes.indices { verified.insert(address &+ UInt8(offset)) }
            for (offset, wrote) in bytes.enumerated() {
                let got: UInt8? = offset < read.count ? read[offset] : nil
                if got != wrote {
                    let at = address &+ UInt8(offset)
                    confirmed[at] = got
                    return .dropped(address: at, wrote: wrote, read: got)
                }
            }
            return nil
        }
    }

    /// The outstanding write was acknowledged (``completed(_:)`` with no reply body).
    package mutating func succeeded() {
        completed(.done)
    }

    /// The outstanding command failed or timed out: the board may or may not hold its values, so
    /// they are unknown and will be sent again (with whatever value is desired by then). A probe
    /// or a read-back is asked again.
    package mutating func failed() {
        guard let operation = outstandingOperation else { return }
        outstandingOperation = nil
        switch operation {
        case .probe:
            probePending = true
        case .write(let run):
            for offset in run.bytes.indices { confirmed[run.address &+ UInt8(offset)] = nil }
        case let .readBack(address, bytes):
            readBacks.insert((address, bytes), at: 0)
        }
    }

    /// Sorted addresses whose desired value is not confirmed (on the addresses the board has).
    /// Called after every reply: one pass over `desired` into one small array (a filtered
    /// Dictionary per call was half of ``nextCommand()``'s instructions).
    func dirtyAddresses() -> [UInt8] {
        let size = boardSize
        var dirty: [UInt8] = []
        for (address, value) in desired where Int(address) < size && confirmed[address] != value {
            dirty.append(address)
        }
        dirty.sort()
        return dirty
    }

    var hasDirtyAddresses: Bool {
        let size = boardSize
        return desired.contains { Int($0.key) < size && confirmed[$0.key] != $0.value }
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
