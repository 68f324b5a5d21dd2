import BoardLink
import BoardProtocol
import ControlPlane
import Logging
import RemoteWire
import SystemIO

/// Everything `analog-remote receive` decides, as a value: the engine (ownership, failsafe,
/// mapping), the control plane (hello, pairing, secrets, stop-all), the teacher's desk (watch,
/// identify, kick, lock), the robot-state reports and the rate limits. It takes events — a
/// wake-up's datagrams, a board link event, the time — each with a ``Tick`` from the caller's
/// clock, and returns what to do as ``ReceiverAction``s in ``actions``. ``ReceiverService``
/// keeps the socket, the board and the loop, and performs the actions.
///
/// The ordering rules of one wake-up (``receive(_:at:unixMillis:)``; each has a test in
/// ReceiverMachineTests):
/// 1. the owner's datagrams before anyone else's, however many sources flood the port;
/// 2. the rate limits before anything is decoded: the budget shared by every source but the
///    owner, then the source's own;
/// 3. state packets go to the engine at once; everyone else's control datagrams are handled
///    where they arrived (a moved owner's ping re-associates it before its next state), the
///    owner's own control datagrams after the whole batch (its bye frees the robot only after
///    everyone's states were judged against it owned);
/// 4. a state from a source the teacher kicked or did not lock the robot to never drives, and a
///    controller that said hello is told why once;
/// 5. sealed envelopes (`--accept secret`) are opened in the batch: a sealed state drives like a
///    plain one, a sealed control message waits like a plain one;
/// 6. the board gets at most one write per wake-up's datagrams (the merged values, latest wins),
///    never the identify blink's outputs while it blinks.
package struct ReceiverMachine: Sendable {
    package typealias Engine = ReceiverEngine<SocketAddress>

    package internal(set) var engine: Engine
    package internal(set) var plane: ControlPlane<SocketAddress>
    package internal(set) var reporter: RobotStateReporter<SocketAddress>
    /// The board's latest sensor block and its serial (the service sets it before each
    /// ``wake(at:)``; nil: none yet, reads off, or a board without the block).
    package var latestSensors: (block: SensorBlock, serial: UInt64)?
    package internal(set) var desk: TeacherDesk<SocketAddress> {
        didSet { deskSummary = (restricts: desk.restricts, idle: desk.identifyStarted == nil && !desk.isWatched) }
    }
    /// What every datagram and wake-up asks of ``desk``, kept beside it: the desk holds instants,
    /// whose layout the compiler does not know, so each read of it copied the whole value. Set on
    /// every change of the desk (its `didSet`), so it cannot go stale.
    var deskSummary = (restricts: false, idle: true)
    /// The budget shared by every source but the owner (nil under `--accept any`).
    var strangers: TokenBucket?
    var notices = NoticeLimiter()
    /// Accepted/denied notices: one per source per 10 s, then the global bucket.
    var helloNotices = PerSourceNotices<SocketAddress>()
    /// While a wake-up's datagrams are handled: the board values they asked for, merged.
    var held: [UInt8: UInt8]?
    /// What to do, in order; the caller performs them and calls ``clearActions()``.
    package internal(set) var actions: [ReceiverAction] = []
    package let settings: Settings
    /// The time of the event being handled (what notices are rate limited by).
    var lastTick: Tick
    /// The state last recorded as applied (``ReceiverAction/record(_:)``: changes only).
    var lastRecorded: (angle: Float, buttons: UInt32)?

    /// What the machine needs to know that does not change while it runs.
    package struct Settings: Sendable {
        /// The board's LED and buzzer addresses, for the identify blink.
        package var identify: (led1: UInt8, led2: UInt8, tone: UInt8, time: UInt8)
        package var failsafeMilliseconds: Int
        /// The `--board` spec (its kind is the dashboard's transport) and the software version.
        package var boardSpec: String
        package var version: String
        /// Lines below this level are not built at all.
        package var logLevel: Logger.Level
        /// `--black-box`: emit ``ReceiverAction/record(_:)`` and ``ReceiverAction/writeBlackBox(_:)``.
        package var records: Bool

        package init(identify: (led1: UInt8, led2: UInt8, tone: UInt8, time: UInt8), failsafeMilliseconds: Int,
                     boardSpec: String, version: String, logLevel: Logger.Level = .info, records: Bool = false) {
            self.identify = identify
            self.failsafeMilliseconds = failsafeMilliseconds
            self.boardSpec = boardSpec
            self.version = version
            self.logLevel = logLevel
            self.records = records
        }
    }

    /// `strangerRate`/`strangerBurst`: the shared budget (ignored under `--accept any`).
    /// `board`: the board as drivers are told it. `now`: start, for the dashboard's uptime.
    package init(engine: Engine, plane: ControlPlane<SocketAddress>, board: String, settings: Settings,
                 strangerRate: Double, strangerBurst: Double, now: Tick) {
        self.engine = engine
        self.plane = plane
        self.settings = settings
        reporter = RobotStateReporter(board: WireText(board))
        desk = TeacherDesk(now: now.instant)
        lastTick = now
        strangers = plane.settings.accept != .any ? TokenBucket(rate: strangerRate, burst: strangerBurst) : nil
        actions.reserveCapacity(16)
    }

    package mutating func clearActions() { actions.removeAll(keepingCapacity: true) }

    // MARK: Events

    /// Start-up: the board to rest.
    package mutating func start() { apply(engine.start()) }

    /// Exit: the values to leave on the board.
    package mutating func shutdown() -> [UInt8: UInt8] { engine.shutdown() }

    /// The board link changed (connected, lost, back, refused).
    package mutating func boardLink(_ event: BoardEvent, at now: Tick) {
        lastTick = now
        reporter.boardLink(event)
        apply(engine.boardLink(event, at: now))
    }

    /// A new mapping (`systemctl reload`): the engine rests and waits for a resting state.
    package mutating func replaceMapping(_ mapping: Mapping, at now: Tick) {
        lastTick = now
        apply(engine.replaceMapping(mapping, at: now))
    }

    /// The earliest time ``wake(at:)`` has something to do, or nil (wait for datagrams only).
    package func deadline(now: Tick) -> Tick? {
        var deadline = engine.deadlineTick
        func consider(_ t: Tick?) { if let t { deadline = deadline.map { min($0, t) } ?? t } }
        let instant = now.instant
        consider(plane.deadline(now: instant).map(Tick.init))
        if !deskSummary.idle { consider(desk.deadline(now: instant).map(Tick.init)) }
        return deadline
    }

    /// Whether a wake-up at `now` must read the socket even when poll did not say it is readable:
    /// past the failsafe deadline, a state that arrived in time must be seen before the tick.
    package func mustReadBeforeTick(at now: Tick) -> Bool {
        engine.failsafe.deadlineTick.map { $0 <= now } == true
    }

    /// After a wake-up's datagrams: the control plane's retransmissions, the engine's deadlines,
    /// the robot-state reports due, the teacher's desk.
    package mutating func wake(at now: Tick) {
        lastTick = now
        let instant = now.instant
        if plane.pollDue(now: instant) { handle(plane.poll(now: instant), at: now) }
        apply(engine.tick(at: now))
        reportRobotState(at: now)
        serveTeacher(at: now)
    }

    /// One wake-up's datagrams, all read at `now` (`unixMillis`: the wall clock then, which
    /// stop-all times are checked against), in the order the type's rules say.
    package mutating func receive<D: ReceivedDatagrams>(_ datagrams: D, at now: Tick, unixMillis: UInt64) {
        lastTick = now
        held = [:]
        defer {
            if let values = held, !values.isEmpty { actions.append(.board(values)) }
            held = nil
        }
        var controls: [(bytes: [UInt8], from: SocketAddress, sealed: Bool)] = []
        let owner = engine.ownership.owner
        plane.owner = owner
        if let owner {
            datagrams.forEachDatagram(now: now, where: { $0 == owner }) { source, bytes, length, arrived in
                if let c = take(bytes, length: length, from: owner, at: now, arrived: arrived) { controls.append(c) }
            }
        }
        datagrams.forEachDatagram(now: now, where: { $0 != owner }) { source, bytes, length, arrived in
            if let c = take(bytes, length: length, from: source, at: now, arrived: arrived) {
                control(c.bytes, from: c.from, sealed: c.sealed, at: now, unixMillis: unixMillis)
            }
        }
        for c in controls { control(c.bytes, from: c.from, sealed: c.sealed, at: now, unixMillis: unixMillis) }
    }

    // MARK: One datagram

    /// The rate limits first (nothing decoded past them), then a state packet goes to the engine
    /// at once; anything else is counted by the engine and returned, for the control plane.
    private mutating func take(_ bytes: ArraySlice<UInt8>, length: Int, from source: SocketAddress,
                               at now: Tick, arrived: Tick?) -> (bytes: [UInt8], from: SocketAddress, sealed: Bool)? {
        if source != engine.ownership.owner, strangers?.take(at: now) == false {
            engine.limited(from: source, at: now)
            return nil
        }
        guard plane.admit(source, at: now) else {
            engine.limited(from: source, at: now)
            return nil
        }
        if plane.settings.accept == .secret, bytes.count == length, ControlPlane<SocketAddress>.isSealed(bytes) {
            let (opened, output) = plane.open(Array(bytes), from: source, now: now.instant)
            handle(output, at: now)
            switch opened {
            case .state(let inner):
                apply(engine.datagram(inner, length: inner.count, from: source, at: now, arrived: arrived,
                                      admitted: plane.mayDriveSealed(source) && teacherAllows(source, at: now)))
                return nil
            case .control(let inner):
                apply(engine.datagram(bytes, length: length, from: source, at: now))
                return (inner, source, true)
            case .refused:
                apply(engine.datagram(bytes, length: length, from: source, at: now))
                return nil
            }
        }
        // The desk is asked only while it restricts anyone.
        let teacherLets = length != StatePacket.size || !deskSummary.restricts || teacherAllows(source, at: now)
        let admitted = length != StatePacket.size || (plane.mayDrive(source) && teacherLets)
        if !teacherLets { refusedByTeacher(source, at: now) }
        apply(engine.datagram(bytes, length: length, from: source, at: now, arrived: arrived, admitted: admitted))
        if !admitted { handle(plane.refusedState(from: source, now: now.instant), at: now) }
        return length == StatePacket.size ? nil : (Array(bytes), source, false)
    }

    private mutating func control(_ bytes: [UInt8], from source: SocketAddress, sealed: Bool, at now: Tick, unixMillis: UInt64) {
        handle(plane.control(bytes, from: source, now: now.instant, unixMillis: unixMillis, sealed: sealed), at: now)
        if Self.isPing(bytes) { reporter.pinged(source) }
    }

    /// An engine step: its write (held while a batch is handled; the identify blink's outputs
    /// left out while it blinks), its notices as log lines, and what the black box keeps.
    mutating func apply(_ step: Engine.Step) {
        if let values = step.write {
            let values = withoutIdentify(values)
            if held != nil { held!.merge(values) { $1 } } else { actions.append(.board(values)) }
        }
        if !step.notices.isEmpty {
            for notice in step.notices { log(notice) }
        }
        if settings.records { record(step) }
    }

    // MARK: Logging

    /// Whether a line at `level` is written at all (below it, nothing is built).
    func logs(_ level: Logger.Level) -> Bool { level >= settings.logLevel }

    /// A log line, if `level` is logged; `suppressed`: lines dropped before it (``allowLine(_:at:)``).
    mutating func log(_ level: Logger.Level, _ message: Logger.Message, _ metadata: Logger.Metadata = [:], suppressed: Int = 0) {
        guard logs(level) else { return }
        var metadata = metadata
        if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
        actions.append(.log(level, message, metadata))
    }

    /// May a line about one source be written now? Such lines go through a token bucket, so a
    /// spoofed flood of source ports cannot turn stderr into the bottleneck: nil drops it, else
    /// how many were dropped since the last one let through (build the line only then).
    mutating func allowLine(_ level: Logger.Level, at now: Tick) -> Int? {
        guard logs(level) else { return nil }
        return notices.allow(at: now)
    }

    /// Log metadata for a source: its display name once it said hello, and its address.
    func who(_ source: SocketAddress) -> Logger.Metadata {
        guard let name = plane.displayName(of: source) else { return ["controller": "\(source)"] }
        return ["controller": "\(name)", "address": "\(source)"]
    }
}

/// A wake-up's datagrams as the machine reads them: each one's source, bytes (a prefix when it
/// arrived cut short), real length, and arrival time when the kernel stamped it.
package protocol ReceivedDatagrams {
    /// Calls `body` for every datagram whose source `include` takes, in the order read (the
    /// others cost no more than their source); `now` is the batch's clock reading.
    func forEachDatagram(now: Tick, where include: (SocketAddress) -> Bool,
                         _ body: (SocketAddress, ArraySlice<UInt8>, Int, Tick?) -> Void)
}
