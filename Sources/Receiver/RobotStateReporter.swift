import ControlPlane
import BoardLink
import ControlWire
import RemoteWire
import BoardProtocol

/// Which robot-state report (Protocol.md §7.9) each controller that said hello should see, and
/// when one is due, as a value type: the receive loop feeds it what changed and asks it, once per
/// loop turn, for the reports to send. It never sends anything itself.
///
/// - A report goes out when the content for a controller changes (``due(engine:names:)``), after
///   every pong to it (``repeatDue(for:)``) and after an accept or a deny.
/// - The revision grows by one with every changed report, over all controllers, so a controller
///   can order what it gets by revision.
/// - Cost: the reports are recomputed only when something they depend on changed (the owner,
///   the failsafe state, the teacher's hold, the board) or a controller was added; a batch of
///   state packets from the owner that changes none of these costs one comparison.
package struct RobotStateReporter<Source: Hashable & Sendable>: Sendable {
    /// The board as the receiver knows it (profile / firmware name, or the `--board` spec).
    package var board: WireText
    /// Why the board is missing; nil while the link is up.
    package private(set) var boardMissing: WireText?
    /// The controllers that said hello and were accepted, with the last report each was sent
    /// (nil: none yet).
    package private(set) var sent: [Source: RobotReport?] = [:]
    private var pendingRepeat: Set<Source> = []
    private var revision: UInt32 = 0
    /// The last controller that owned the robot: after its silence it still sees the failsafe
    /// (centre to resume) rather than "free", until another controller takes the robot.
    private(set) var lastOwner: Source?
    private var lastKey: Key?
    private var dirty = false
    private var nextPrune: ContinuousClock.Instant?
    /// The `robot-sensors` reports to the same controllers (SensorReporter.swift).
    private var sensorReports = SensorReporter<Source>()

    /// Everything a report depends on besides the controller itself.
    struct Key: Equatable {
        var owner: Source?
        var lastOwner: Source?
        var waiting: Failsafe.Reason?
        var teacher: Bool
        var boardMissing: WireText?
        var board: WireText
    }

    package init(board: WireText) { self.board = board }

    /// A controller was accepted: it gets a report now and from then on.
    package mutating func accepted(_ source: Source) {
        if sent[source] == nil { sent[source] = .some(nil) }
        dirty = true
    }

    /// A controller left (bye) or was forgotten.
    package mutating func left(_ source: Source) {
        sent[source] = nil
        sensorReports.left(source)
        pendingRepeat.remove(source)
        if lastOwner == source { lastOwner = nil }
    }

    /// At most once a second: forgets controllers `keep` no longer wants (gone without a bye: the
    /// control plane dropped their channel), so the table stays bounded by the control plane's.
    package mutating func prune(now: ContinuousClock.Instant, keep: (Source) -> Bool) {
        if let nextPrune, now < nextPrune { return }
        nextPrune = now + .seconds(1)
        for source in sent.keys where !keep(source) { left(source) }
    }

    /// A hello was denied: the one report that says so (state 4), with a fresh revision.
    package mutating func denied(_ deny: ControlMessage.Deny) -> RobotReport {
        revision &+= 1
        return RobotReport(revision: revision, state: .refused(deny.reason, deny.text), board: board)
    }

    /// The receiver answered a ping from `source`: its current report goes out again.
    package mutating func pinged(_ source: Source) {
        if sent[source] != nil { pendingRepeat.insert(source) }
    }

    package mutating func boardLink(_ event: BoardEvent) {
        sensorReports.boardLink(event)
        switch event {
        case .connected, .reconnected: boardMissing = nil
        case .disconnected(let device, let reason): boardMissing = reason.isEmpty ? WireText(device) : "\(device): \(reason)"
        // A refused board is there but must not be driven: to the driver it is as good as missing.
        case .refused(_, let reason): boardMissing = "refused: \(reason)"
        }
    }

    /// The report `source` should see now (revision not yet assigned).
    package func state(for source: Source, engine: ReceiverEngine<Source>, name: (Source) -> WireText) -> RobotReport.State {
        if let boardMissing { return .boardMissing(why: boardMissing) }
        if engine.stoppedByTeacher { return .teacherStop }
        let owner = engine.ownership.owner
        if engine.ownership.policy != .any, let owner, owner != source { return .owned(by: name(owner)) }
        let mine = engine.ownership.policy == .any || owner == source || (owner == nil && lastOwner == source)
        guard mine else { return .free }
        switch engine.failsafe.state {
        case .driving: return .driving
        case .waitingForNeutral(let reason):
            if owner == nil, engine.ownership.policy != .any, lastOwner != source { return .free }
            return .failsafe(Self.cause(reason))
        }
    }

    static func cause(_ reason: Failsafe.Reason) -> RobotReport.Cause {
        switch reason {
        case .startup: .startup
        case .silence: .silence
        case .boardLink: .boardLink
        case .released: .released
        case .teacher: .teacherRelease
        // A reload (`systemctl reload`) with a new mapping starts from rest like a fresh start:
        // the driver sees "READY: centre to start" (Protocol.md §7.9 has no cause of its own for it).
        case .reloaded: .startup
        }
    }

    /// The reports to send this loop turn: every controller whose report changed, then the
    /// repeats owed for pongs. Call once per loop turn, after the engine and the control plane
    /// have taken everything that arrived.
    package mutating func due(engine: ReceiverEngine<Source>, name: (Source) -> WireText) -> [(Source, RobotReport)] {
        if let owner = engine.ownership.owner { lastOwner = owner }
        // Asked on every wake-up: with nobody to report to (no hello accepted) there is nothing
        // to compare. `accepted` sets `dirty`, so the first report after it is still computed.
        if sent.isEmpty && pendingRepeat.isEmpty { return [] }
        var out: [(Source, RobotReport)] = []
        let waiting: Failsafe.Reason? = if case .waitingForNeutral(let r) = engine.failsafe.state { r } else { nil }
        let key = Key(owner: engine.ownership.owner, lastOwner: lastOwner, waiting: waiting,
                      teacher: engine.stoppedByTeacher, boardMissing: boardMissing, board: board)
        if dirty || key != lastKey {
            dirty = false
            lastKey = key
            for (source, last) in sent {
                let current = state(for: source, engine: engine, name: name)
                if let last, last.state == current, last.board == board { continue }
                revision &+= 1
                let fresh = RobotReport(revision: revision, state: current, board: board)
                sent[source] = fresh
                out.append((source, fresh))
                pendingRepeat.remove(source)
            }
        }
        for source in pendingRepeat {
            if let report = sent[source] ?? nil { out.append((source, report)) }
        }
        pendingRepeat.removeAll()
        return out
    }
}

extension RobotStateReporter {
    /// The `robot-sensors` reports to send this loop turn (``SensorReporter``), to every
    /// controller that gets robot-state reports; none while the board is missing or refused.
    package mutating func sensorsDue(latest: (block: SensorBlock, serial: UInt64)?,
                                     now: ContinuousClock.Instant) -> [(Source, RobotSensors)] {
        guard boardMissing == nil, !sent.isEmpty else { return [] }
        return sensorReports.due(latest: latest, sources: sent.keys, now: now)
    }
}
