#if canImport(Glibc)
import Glibc
#endif
import BoardProtocol
import Foundation
import Synchronization
import SystemIO

/// A board kept in the state its owner wants, on its own thread.
///
/// The owner sets desired memory-map values from any thread; they are written with a
/// ``MemoryMapWriter`` (only what changed, contiguous addresses merged into one `W`, one write
/// outstanding, the latest value winning) through a ``BoardSession`` (reply timeout,
/// resynchronisation). When the link is idle, or only a sensor read is on the wire,
/// ``setDesired(_:)`` writes the line itself, on the caller's thread (one hop from the caller to
/// the device); while a write's reply is awaited or the device is down it only records the
/// values, and the connection's thread sends them later.
///
/// Faults: end of file, an I/O error, a hang-up, or ``BoardOptions/unansweredLimit`` timeouts in a
/// row count as the board gone. The connection reports ``BoardEvent/disconnected(device:reason:)``,
/// reopens the device every ``BoardOptions/reconnectInterval``, writes the profile's safe state
/// before anything else, then reports ``BoardEvent/reconnected(device:)`` and goes on with the
/// desired values (set before or during the outage: the owner's failsafe decides what they are).
/// The safe state is also written first at the initial open.
///
/// One driver per board: a tty is opened with an exclusive lock (held until the connection
/// closes or the process dies), so a second connection to the same board — another receiver,
/// `analog-remote rest` — is refused at open, before it writes or flushes anything, and a
/// reopen waits for the holder to let go.
///
/// Probe: after every open the first command is one bounded read of the map
/// (``BoardIdentity/probe``); `fit` decides from the identity which profile to use, or refuses
/// the board (``BoardEvent/refused(device:reason:)``: its safe state, then nothing). The first
/// write of each address after every open is read back at once; a board that did not keep it
/// is refused the same way, one command after that write.
///
/// Sensors: while the writer has nothing to send, the link reads the sensor block with one
/// `R 07 0b` every 1/``BoardOptions/sensorRate`` s (``SensorPoller``) and hands each block to
/// `onSensors`; a change the owner asks for while that read is on the wire is written at once
/// behind it (never behind anything else).
///
/// The connection's thread reads every reply. It sleeps in poll(2) on the device and a wake-up
/// flag; while the link is up and busy it also looks at the clock once per reply timeout (a
/// command the owner's thread started meanwhile must time out if unanswered). Quiet for a
/// second, it looks once a second (an idle receiver is not woken ten times a second), and the
/// owner's thread wakes it when it starts a command.
package final class BoardConnection: Sendable {
    private let core: ConnectionCore

    /// Opens the board now; a failure to open at start is thrown (one line naming the device,
    /// the cause and the fix). Without `fit`, a board that has every address of `profile` is
    /// driven with it, any other is refused.
    package init(spec: BoardSpec, profile: MemoryMapProfile, options: BoardOptions = BoardOptions(),
                fit: BoardFitter? = nil, onSensors: SensorSink? = nil,
                onEvent: @escaping @Sendable (BoardEvent) -> Void = { _ in }) throws(BoardLinkError) {
        if let problem = profile.problem {
            throw BoardLinkError(.badProfile, device: spec.device, "\(spec.device): bad memory-map profile: \(problem)")
        }
        let transport = try BoardTransports.open(spec, profile: profile, exclusive: true)
        let fitter = fit ?? Self.defaultFitter(profile: profile, device: spec.device)
        let sink = onSensors ?? SensorSink { _ in }
        do {
            core = try ConnectionCore(spec: spec, profile: profile, options: options, fit: fitter.judge,
                                      onSensors: sink.take, onEvent: onEvent)
        } catch {
            transport.close()
            throw BoardLinkError(.deviceUnavailable, device: spec.device, "\(spec.device): \(error)")
        }
        core.start(with: transport)
    }

    deinit { close() }

    /// Thread-safe: merges into the desired map (latest value wins) and, if the link is idle,
    /// writes the next command to the device before returning (a non-blocking write, bounded
    /// by the reply timeout when the device takes no input).
    package func setDesired(_ values: [UInt8: UInt8]) {
        core.setDesired(values)
    }

    /// Sets desired = safe state and blocks until the board confirmed it (prompt seen) or
    /// timeout. Returns whether confirmed.
    package func writeSafeState(timeout: Duration) -> Bool {
        core.writeSafeState(timeout: timeout)
    }

    /// isConnected, device label, confirmed values, commands sent, last error, identity.
    package var snapshot: BoardSnapshot { core.snapshot }

    /// When the connection's thread last went round its loop. It goes round at least once per
    /// reply timeout while the board is busy, once per reconnect interval while it is down; on a
    /// quiet link it sleeps in poll(2) with nothing due, and the beat is "now" while it does. An
    /// older beat means the thread that reads the board's replies (and so lets the next
    /// command out) is stuck. Lock-free: cheap enough for a watchdog to ask.
    package var lastBeat: Tick {
        core.parked.load(ordering: .relaxed) ? Tick.now() : Tick(nanoseconds: core.beat.load(ordering: .relaxed))
    }

    /// Waits until the probe after the last open has been answered and judged (the snapshot
    /// then has an ``BoardSnapshot/identity`` and a profile, or a refusal), or `timeout`.
    /// Returns the snapshot at that moment, nil on timeout.
    package func waitUntilIdentified(timeout: Duration) -> BoardSnapshot? {
        core.waitUntil(timeout: timeout) { $0.profile != nil || $0.refusal != nil }
    }

    /// The default judgement: the profile's addresses must all be on the board.
    static func defaultFitter(profile: MemoryMapProfile, device: String) -> BoardFitter {
        BoardFitter { identity in fit(identity, profile: profile, device: device) }
    }

    static func fit(_ identity: BoardIdentity, profile: MemoryMapProfile, device: String) -> BoardFit {
        guard identity.profile != nil else {
            return .refuse(BoardRefusal.unknownFirmware(identity, device: device), safeState: nil)
        }
        let needed = profile.safeState.keys.sorted()
        if let missing = needed.first(where: { Int($0) >= identity.mapSize }) {
            return .refuse(BoardRefusal.missingAddress(missing, role: "the \(profile.name) profile", identity: identity, device: device),
                           safeState: identity.profile?.profile)
        }
        return .use(profile)
    }

    /// Stops the thread and closes the device (does not write anything: call
    /// ``writeSafeState(timeout:)`` first). Safe to call twice.
    package func close() {
        core.stop()
    }
}

/// The link's state and the two threads that use it.
///
/// One hop: everything — the device, the ``MemoryMapWriter``, the ``BoardSession``, the
/// counters — lives in one ``LinkState`` behind one `Mutex`. Whoever changes the state and finds
/// that the link can take a command (up and idle, or a sensor read alone on the wire and a
/// change to write: ``LinkState/pump()``) sends it itself, under that lock: the owner's thread in
/// ``setDesired(_:)`` (so a value reaches the device without waking another thread), the
/// connection's thread after a reply, a timeout or a reopen. The writer's rules therefore hold
/// whoever sends (one write in flight, latest value wins, merged runs,
/// the probe and the safe state first, read-backs, nothing past the map).
///
/// The connection's thread alone reads the device (every reply), times commands out, reopens
/// the device and reports ``BoardEvent``s, in the order they happened: a fault that the
/// owner's thread meets while writing is handled there under the lock (once: the device is then
/// gone for both) and its event queued for the connection's thread, which it wakes.
///
/// Traps: bytes are written only under the lock, so two lines never interleave; `onEvent`
/// and `fit`'s caller's waiters run outside it (`onEvent` may call back in). A command started
/// by the owner's thread while the connection's thread sleeps must still time out: while the
/// link is up and idle that thread looks at the clock once per reply timeout, which is never
/// later than the deadline of a command started meanwhile.
final class ConnectionCore: Sendable {
    let spec: BoardSpec
    let options: BoardOptions
    let onEvent: @Sendable (BoardEvent) -> Void
    let onSensors: @Sendable (SensorBlock) -> Void
    private let wake: EventFlag
    private let finished: EventFlag
    private let state: Mutex<LinkState>
    /// ``BoardConnection/lastBeat``, in nanoseconds of ``Tick``.
    let beat = Atomic<Int64>(Tick.now().nanoseconds)
    /// The thread sleeps in poll(2) on a quiet link with nothing due (``LinkState/sleepsLong``):
    /// it is not stuck, whatever its last beat says — a command started meanwhile wakes it.
    let parked = Atomic<Bool>(false)

    init(spec: BoardSpec, profile: MemoryMapProfile, options: BoardOptions,
         fit: @escaping @Sendable (BoardIdentity) -> BoardFit,
         onSensors: @escaping @Sendable (SensorBlock) -> Void = { _ in },
         onEvent: @escaping @Sendable (BoardEvent) -> Void) throws(SystemError) {
        self.spec = spec
        self.options = options
        self.onEvent = onEvent
        self.onSensors = onSensors
        wake = try EventFlag()
        finished = try EventFlag()
        state = Mutex(LinkState(spec: spec, profile: profile, options: options, fit: fit))
    }

    func start(with transport: any BoardTransport) {
        state.withLock { s in
            s.started = true
            s.install(transport, reconnect: false)
        }
        let thread = Thread { [self] in
            state.withLock { $0.loopThread = pthread_self() }
            run()
            let waiters = state.withLock { s -> [EventFlag] in
                s.stopped = true
                return Array(s.waiters.values)
            }
            for w in waiters { w.raise() }
            finished.raise()
        }
        thread.name = "board \(spec.device)"
        thread.start()
    }

    // MARK: owner side

    /// Merges `values` into the desired map and, when the link is idle, writes the next command
    /// from this thread (see the type's documentation).
    func setDesired(_ values: [UInt8: UInt8]) {
        guard !values.isEmpty else { return }
        let after = state.withLock { s in
            s.writer.setDesired(values)
            s.requested &+= 1
            s.pump()
            return s.afterChange()
        }
        notify(after)
    }

    var onLoopThread: Bool {
        state.withLock { s in s.loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func writeSafeState(timeout: Duration) -> Bool {
        // From inside onEvent the loop cannot make progress while we wait: do not deadlock.
        if onLoopThread {
            state.withLock { s in
                s.writer.setDesired(s.writer.safeState)
                s.requested &+= 1
                s.pump()
            }
            return false
        }
        let deadline = ContinuousClock.now + timeout
        guard let flag = try? EventFlag() else { return false }
        let id = ObjectIdentifier(flag)
        let (generation, after) = state.withLock { s in
            s.writer.setDesired(s.writer.safeState)
            s.requested &+= 1
            s.waiters[id] = flag
            s.pump()
            return (s.requested, s.afterChange())
        }
        notify(after)
        defer { _ = state.withLock { $0.waiters.removeValue(forKey: id) } }
        while true {
            let (done, stopped) = state.withLock { s in ((s.safeConfirmed ?? 0) >= generation, s.stopped) }
            if done { return true }
            if stopped || ContinuousClock.now >= deadline { return false }
            _ = try? Poller.wait([(flag.descriptor.rawValue, .readable)], until: deadline)
            flag.clear()
        }
    }

    var snapshot: BoardSnapshot { state.withLock { $0.snapshot } }

    /// Waits until `condition` holds for the snapshot, the loop stops, or `timeout`.
    func waitUntil(timeout: Duration, _ condition: @escaping (BoardSnapshot) -> Bool) -> BoardSnapshot? {
        let deadline = ContinuousClock.now + timeout
        guard let flag = try? EventFlag() else { return nil }
        let id = ObjectIdentifier(flag)
        state.withLock { $0.waiters[id] = flag }
        defer { _ = state.withLock { $0.waiters.removeValue(forKey: id) } }
        while true {
            let (snapshot, stopped) = state.withLock { ($0.snapshot, $0.stopped) }
            if condition(snapshot) { return snapshot }
            if stopped || ContinuousClock.now >= deadline { return nil }
            _ = try? Poller.wait([(flag.descriptor.rawValue, .readable)], until: deadline)
            flag.clear()
        }
    }

    func stop() {
        let wasRunning = state.withLock { s -> Bool in
            let running = s.started && !s.stopped && !s.stopRequested
            s.stopRequested = true
            return running
        }
        guard wasRunning else { return }
        wake.raise()
        if onLoopThread { return }   // close() from inside onEvent: the loop ends after this step
        // Joins the thread: it finishes the current step (at most one poll wake-up) and exits.
        while !state.withLock({ $0.stopped }) {
            _ = try? Poller.wait([(finished.descriptor.rawValue, .readable)], timeout: .seconds(1))
        }
    }

    /// Wakes whoever waits for a change; wakes the connection's thread when a fault met on
    /// another thread left it something to do (an event to report, a reopen to plan).
    private func notify(_ after: LinkState.After) {
        for w in after.waiters { w.raise() }
        if after.wakeLoop { wake.raise() }
    }

    // MARK: the connection's thread

    /// Sleeps in poll(2) until the device has bytes or hangs up, someone wakes it, a reply
    /// times out, the idle link's clock check, or it is time to reopen.
    private func run() {
        deliverEvents()
        while true {
            beat.store(Tick.now().nanoseconds, ordering: .relaxed)
            let plan = state.withLock { s -> LinkState.Plan? in
                if s.stopRequested { return nil }
                s.pump()
                return s.plan(wake: wake.descriptor.rawValue, now: .now)
            }
            deliverEvents()
            guard let plan else { break }
            let ready: [Poller.Events]
            if plan.parks { parked.store(true, ordering: .relaxed) }
            do {
                ready = try Poller.wait(plan.descriptors, until: plan.deadline)
                parked.store(false, ordering: .relaxed)
            } catch {
                parked.store(false, ordering: .relaxed)
                state.withLock { $0.lastError = "\(spec.device): poll: \(error.reason)" }
                continue
            }
            if !ready[0].isEmpty { wake.clear() }
            let (after, reopen) = state.withLock { s in
                s.handle(ready: ready.dropFirst(), epoch: plan.epoch)
                return (s.afterChange(), s.transport == nil && s.nextAttempt.map { ContinuousClock.now >= $0 } == true)
            }
            for w in after.waiters { w.raise() }
            if reopen { self.reopen() }
            deliverEvents()
        }
        state.withLock { s in
            s.transport?.close()
            s.transport = nil
            s.epoch &+= 1
        }
    }

    /// Opens the device again (outside the lock: an open may take a while) and installs it.
    private func reopen() {
        do {
            let transport = try BoardTransports.open(spec, profile: state.withLock { $0.initialProfile }, exclusive: true)
            let after = state.withLock { s in
                s.install(transport, reconnect: true)
                return s.afterChange()
            }
            for w in after.waiters { w.raise() }
        } catch {
            state.withLock { s in
                s.lastError = error.message
                s.nextAttempt = .now + options.reconnectInterval
            }
        }
    }

    /// Reports the queued events, in order, on this thread, outside the lock.
    private func deliverEvents() {
        let (events, sensors) = state.withLock { s -> ([BoardEvent], SensorBlock?) in
            defer { s.events.removeAll(); s.sensorsRead = nil }
            return (s.events, s.sensorsRead)
        }
        for event in events { onEvent(event) }
        if let sensors { onSensors(sensors) }
    }
}

/// Everything about the link, behind ``ConnectionCore``'s lock: the device, the writer and the
/// session, the counters, the waiters. Its methods never call out (no `onEvent`): events are
/// queued for the connection's thread.
struct LinkState: Sendable {
    let device: String
    /// The profile the device is opened with (and whose safe state the crash guard writes
    /// until a probe says more).
    let initialProfile: MemoryMapProfile
    let options: BoardOptions
    let fit: @Sendable (BoardIdentity) -> BoardFit
    var transport: (any BoardTransport)?
    /// Bumped whenever the device is installed or lost: readiness polled on an older device is
    /// ignored.
    var epoch: UInt64 = 0
    var writer: MemoryMapWriter
    var session: BoardSession
    /// When the sensor block is read (only while the writer is idle).
    var sensors: SensorPoller
    /// A block read since the connection's thread last reported one.
    var sensorsRead: SensorBlock?
    var nextAttempt: ContinuousClock.Instant?
    /// This link came from a reconnect: report it once the safe state is confirmed.
    var reconnecting = false
    var lastError: String?
    var sent = 0
    var failed = 0
    var disconnections = 0
    /// Events for the connection's thread to report.
    var events: [BoardEvent] = []
    /// A fault was handled off the connection's thread: wake it.
    var loopMustLook = false
    /// When the last command went out (or the link came up).
    var lastCommandAt: ContinuousClock.Instant = .now
    /// The connection's thread sleeps without looking at the clock for a long while (the link
    /// has been quiet for ``quietAfter``): whoever starts a command meanwhile wakes it, so the
    /// command's reply deadline is watched. While commands come often it is awake for their
    /// replies anyway and looks once per reply timeout, at no cost to the sender.
    var sleepsLong = false
    /// Quiet this long, the link's thread stops looking at the clock per reply timeout.
    static let quietAfter: Duration = .seconds(1)
    /// How often a quiet link's thread still goes round (``BoardConnection/lastBeat``).
    static let quietLook: Duration = .seconds(1)
    /// Bumped by every setDesired and writeSafeState.
    var requested: UInt64 = 0
    /// The newest generation at which the safe state was confirmed with nothing outstanding
    /// that would overwrite it (kept up to date while someone waits).
    var safeConfirmed: UInt64?
    var stopRequested = false
    var started = false
    var stopped = false
    var waiters: [ObjectIdentifier: EventFlag] = [:]
    /// The loop's thread, so that calls made from inside `onEvent` do not wait for themselves.
    var loopThread: pthread_t?

    init(spec: BoardSpec, profile: MemoryMapProfile, options: BoardOptions,
         fit: @escaping @Sendable (BoardIdentity) -> BoardFit) {
        device = spec.device
        initialProfile = profile
        self.options = options
        self.fit = fit
        writer = MemoryMapWriter(profile: profile, verifies: true)
        session = BoardSession(replyTimeout: options.replyTimeout)
        sensors = SensorPoller(rate: options.sensorRate)
    }

    /// A freshly opened device: nothing on the board is known; the probe goes first.
    mutating func install(_ transport: any BoardTransport, reconnect: Bool) {
        self.transport = transport
        epoch &+= 1
        session.reset()
        writer.connected()
        sensors.connected(now: .now)
        nextAttempt = nil
        reconnecting = reconnect
        if !reconnect { events.append(.connected(device: device)) }
    }

    /// Starts the next command if the link can take one: formats the line and writes it, here,
    /// on the calling thread (under the lock). On an idle link the writer's command (a state
    /// change) always goes first; a sensor read only when the writer has nothing to send. One
    /// command on the wire at a time — except under ``BoardOptions/writeBehindRead``: while a
    /// sensor read alone is on the wire, a changed value goes out at once behind it (the
    /// firmware answers both in one pass, Protocol.md §4.6 rule 8); a probe, the safe state after
    /// a connect or a read-back still waits for the read's prompt. Never anything behind a
    /// write, never two writes: the writer has one command outstanding at most.
    mutating func pump() {
        guard !stopRequested, let t = transport else { return }
        let now = ContinuousClock.now
        let command: BoardCommand
        if session.isIdle {
            guard let next = writer.nextCommand() ?? sensors.nextCommand(writer: writer, now: now) else { return }
            command = next
        } else if options.writeBehindRead, sensors.isReading, session.inFlight == [SensorBlock.read],
                  let change = writer.nextChange() {
            command = change
        } else {
            return
        }
        let line = session.start(command, now: now)
        lastCommandAt = now
        if sleepsLong {
            sleepsLong = false
            loopMustLook = true
        }
        do {
            try t.send(line, timeout: options.replyTimeout)
            sent += 1
        } catch {
            lose(error.cause)
        }
    }

    struct Plan {
        var descriptors: [(fd: Int32, events: Poller.Events)]
        var deadline: ContinuousClock.Instant?
        var epoch: UInt64
        /// A quiet link's long sleep (``sleepsLong``).
        var parks = false
    }

    /// What the connection's thread polls next: the wake flag first, then the device.
    mutating func plan(wake: Int32, now: ContinuousClock.Instant) -> Plan {
        loopMustLook = false
        var fds: [(fd: Int32, events: Poller.Events)] = [(wake, .readable)]
        let deadline: ContinuousClock.Instant?
        if let t = transport {
            fds += t.readDescriptors.map { ($0, Poller.Events.readable) }
            // Idle: another thread may start a command while we sleep. While commands come
            // often, look again within one reply timeout (never later than that command's
            // deadline); once the link has been quiet for a while, sleep long and let the
            // sender wake us (``sleepsLong``). A sensor read due while the writer is idle:
            // wake then to send it.
            let quiet = now - lastCommandAt >= Self.quietAfter
            var idle = now + (quiet ? Self.quietLook : options.replyTimeout)
            if writer.isIdleForReads, let due = sensors.deadline { idle = min(idle, due) }
            deadline = session.deadline ?? idle
            sleepsLong = session.deadline == nil && quiet
        } else {
            deadline = nextAttempt
            sleepsLong = false
        }
        return Plan(descriptors: fds, deadline: deadline, epoch: epoch, parks: sleepsLong)
    }

    /// After a poll: read what the device sent (if it is still the device polled), time the
    /// command in flight out, and send the next one.
    mutating func handle(ready device: ArraySlice<Poller.Events>, epoch polled: UInt64) {
        sleepsLong = false
        if polled == epoch, let t = transport, !device.isEmpty {
            if device.contains(where: { $0.contains(.readable) || $0.contains(.hangUp) }) {
                drain(t)
            }
            if transport != nil, device.contains(where: { $0.contains(.hangUp) }) {
                lose("hang-up (the board went away)")
            }
        }
        let timedOut = transport != nil ? session.checkTimeout(now: .now) : []
        if !timedOut.isEmpty {
            // Oldest first: a sensor read's failure before the write behind it (``handle(_:)``).
            for event in timedOut { handle(event) }
            if session.consecutiveTimeouts >= options.unansweredLimit {
                lose("the board stopped answering (\(session.consecutiveTimeouts) reply timeouts in a row)")
            }
        }
        pump()
    }

    /// Reads everything waiting and feeds it to the session.
    mutating func drain(_ t: any BoardTransport) {
        while transport != nil {
            let bytes: [UInt8]?
            do {
                bytes = try t.receive()
            } catch {
                lose(error.cause)
                return
            }
            guard let bytes else { return }
            for event in session.receive(bytes, now: .now) { handle(event) }
            if t.lastReceiveDrained { return }
        }
    }

    /// One reply or failure. While a sensor read is outstanding it is the oldest command in
    /// flight (it goes out only on an idle link, and only a write may follow it), so the first
    /// event while ``SensorPoller/isReading`` is the read's.
    mutating func handle(_ event: BoardSession.Event) {
        switch event {
        case .completed(_, let response) where sensors.isReading:
            if let block = sensors.completed(response) { sensorsRead = block }
        case .failed(_, let error) where sensors.isReading:
            sensors.failed()
            failed += 1
            lastError = "\(device): \(error)"
        case .completed(_, let response):
            switch writer.completed(response) {
            case .identified(let identity)?:
                switch fit(identity) {
                case .use(let profile):
                    writer.identified(profile: profile)
                    transport?.armCrashGuard(safeState: writer.safeState)
                case let .refuse(reason, safeState):
                    refuse(reason, safeState: safeState)
                }
            case .unknownBoard(let response)?:
                refuse(BoardRefusal.notAKitBoard(response, device: device), safeState: nil)
            case let .dropped(address, wrote, read)?:
                refuse(BoardRefusal.droppedWrite(address: address, wrote: wrote, read: read,
                                                 identity: writer.identity, device: device), safeState: nil)
            case nil:
                break
            }
            if reconnecting && !writer.isWritingSafeState && writer.refusal == nil {
                reconnecting = false
                events.append(.reconnected(device: device))
            }
        case .failed(_, let error):
            writer.failed()
            failed += 1
            lastError = "\(device): \(error)"
        case .noise(let error):
            lastError = "\(device): \(error)"
        }
    }

    /// The board must not be driven: its safe state (where it has the bytes), then nothing.
    mutating func refuse(_ reason: String, safeState: MemoryMapProfile?) {
        writer.refuse(reason, profile: safeState)
        transport?.armCrashGuard(safeState: writer.safeState)
        reconnecting = false
        lastError = reason
        events.append(.refused(device: device, reason: reason))
    }

    /// The device is gone: close it, tell the owner, and plan the next open. Whichever thread
    /// meets the fault first handles it; the other then finds no device (or a newer epoch).
    mutating func lose(_ reason: String) {
        transport?.close()
        transport = nil
        epoch &+= 1
        session.reset()
        writer.disconnected()
        sensors.disconnected()
        reconnecting = false
        disconnections += 1
        lastError = "\(device): \(reason)"
        nextAttempt = .now + options.reconnectInterval
        events.append(.disconnected(device: device, reason: reason))
        loopMustLook = true
    }

    struct After {
        var waiters: [EventFlag]
        var wakeLoop: Bool
    }

    /// After any change: who to wake. The safe-state check is made only while someone waits.
    mutating func afterChange() -> After {
        guard !waiters.isEmpty || loopMustLook else { return After(waiters: [], wakeLoop: false) }
        if !waiters.isEmpty, isSafeConfirmed { safeConfirmed = requested }
        defer { loopMustLook = false }
        return After(waiters: Array(waiters.values), wakeLoop: loopMustLook)
    }

    /// The board holds the safe state and nothing on the wire would overwrite it.
    var isSafeConfirmed: Bool {
        let safe = writer.safeState
        guard transport != nil, writer.identity != nil || writer.refusal != nil,
              !writer.isWritingSafeState, writer.isConfirmed(safe) else { return false }
        if case let .write(address, bytes)? = writer.outstanding {
            // A write on the wire that would overwrite a safe value: not safe yet.
            for (i, b) in bytes.enumerated() where safe[address &+ UInt8(i)].map({ $0 != b }) ?? false {
                return false
            }
        }
        return true
    }

    var snapshot: BoardSnapshot {
        let connected = transport != nil
        var s = BoardSnapshot(isConnected: connected, device: device, confirmed: writer.confirmed, commandsSent: sent,
                              commandsFailed: failed, disconnections: disconnections, lastError: lastError)
        s.identity = connected ? writer.identity : nil
        s.refusal = connected ? writer.refusal : nil
        let known = connected && writer.refusal == nil && writer.identity != nil && !writer.isWritingSafeState
        s.profile = known ? writer.profile : nil
        s.awaitingReply = connected && !session.isIdle
        s.sensors = connected ? sensors.latest : nil
        s.sensorReads = sensors.reads
        return s
    }
}


/// Where a ``BoardConnection`` hands each sensor block it read (on its own thread, outside its
/// lock, after the events of the same turn: return quickly). A value, so that a trailing
/// closure still means `onEvent`.
package struct SensorSink: Sendable {
    package let take: @Sendable (SensorBlock) -> Void
    package init(_ take: @escaping @Sendable (SensorBlock) -> Void) { self.take = take }
}
