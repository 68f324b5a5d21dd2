#if canImport(Glibc)
import Glibc
#endif
import BoardProtocol
import Foundation
import Synchronization
import SystemIO

/// A board kept in the state its owner wants, on its own thread.
///
/// The owner sets desired memory-map values from any thread (``setDesired(_:)`` returns at once);
/// the connection's thread writes them with a ``MemoryMapWriter`` (only what changed, contiguous
/// addresses merged into one `W`, one command outstanding, the latest value winning) through a
/// ``BoardSession`` (reply timeout, resynchronisation).
///
/// Faults: end of file, an I/O error, a hang-up, or ``BoardOptions/unansweredLimit`` timeouts in a
/// row count as the board gone. The connection reports ``BoardEvent/disconnected(device:reason:)``,
/// reopens the device every ``BoardOptions/reconnectInterval``, writes the profile's safe state
/// before anything else, then reports ``BoardEvent/reconnected(device:)`` and goes on with the
/// desired values (set before or during the outage: the owner's failsafe decides what they are).
/// The safe state is also written first at the initial open.
///
/// Probe: after every open the first command is one bounded read of the map
/// (``BoardIdentity/probe``); `fit` decides from the identity which profile to use, or refuses
/// the board (``BoardEvent/refused(device:reason:)``: its safe state, then nothing). The first
/// write of each address after every open is read back at once; a board that did not keep it
/// is refused the same way, one command after that write.
///
/// The thread sleeps in poll(2) on the device and a wake-up flag: no busy polling.
public final class BoardConnection: Sendable {
    private let core: ConnectionCore

    /// Opens the board now; a failure to open at start is thrown (one line naming the device,
    /// the cause and the fix). Without `fit`, a board that has every address of `profile` is
    /// driven with it, any other is refused.
    public init(spec: BoardSpec, profile: MemoryMapProfile, options: BoardOptions = BoardOptions(),
                fit: BoardFitter? = nil,
                onEvent: @escaping @Sendable (BoardEvent) -> Void = { _ in }) throws(BoardLinkError) {
        if let problem = profile.problem {
            throw BoardLinkError(.badProfile, device: spec.device, "\(spec.device): bad memory-map profile: \(problem)")
        }
        let transport = try BoardTransports.open(spec, profile: profile)
        let fitter = fit ?? Self.defaultFitter(profile: profile, device: spec.device)
        do {
            core = try ConnectionCore(spec: spec, profile: profile, options: options, fit: fitter.judge, onEvent: onEvent)
        } catch {
            transport.close()
            throw BoardLinkError(.deviceUnavailable, device: spec.device, "\(spec.device): \(error)")
        }
        core.start(with: transport)
    }

    deinit { close() }

    /// Thread-safe, returns at once: merges into the desired map; latest value wins.
    public func setDesired(_ values: [UInt8: UInt8]) {
        core.setDesired(values)
    }

    /// Sets desired = safe state and blocks until the board confirmed it (prompt seen) or
    /// timeout. Returns whether confirmed.
    public func writeSafeState(timeout: Duration) -> Bool {
        core.writeSafeState(timeout: timeout)
    }

    /// isConnected, device label, confirmed values, commands sent, last error, identity.
    public var snapshot: BoardSnapshot { core.snapshot }

    /// Waits until the probe after the last open has been answered and judged (the snapshot
    /// then has an ``BoardSnapshot/identity`` and a profile, or a refusal), or `timeout`.
    /// Returns the snapshot at that moment, nil on timeout.
    public func waitUntilIdentified(timeout: Duration) -> BoardSnapshot? {
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
    public func close() {
        core.stop()
    }
}

/// The state shared between the owner's threads and the connection's thread.
final class ConnectionCore: Sendable {
    let spec: BoardSpec
    let profile: MemoryMapProfile
    let options: BoardOptions
    let onEvent: @Sendable (BoardEvent) -> Void
    let fit: @Sendable (BoardIdentity) -> BoardFit
    private let wake: EventFlag
    private let finished: EventFlag

    private struct Shared: Sendable {
        var pending: [UInt8: UInt8] = [:]
        /// writeSafeState asked for the safe state (of the profile in use, known on the loop).
        var wantsSafe = false
        /// Bumped by every setDesired; the loop publishes the generation it has absorbed.
        var requested: UInt64 = 0
        var absorbed: UInt64 = 0
        /// The newest absorbed generation at which the safe state was confirmed with nothing
        /// outstanding that would overwrite it.
        var safeConfirmed: UInt64?
        var snapshot: BoardSnapshot
        var stopRequested = false
        var started = false
        var stopped = false
        var waiters: [ObjectIdentifier: EventFlag] = [:]
        /// The loop's thread, so that calls made from inside `onEvent` do not wait for themselves.
        var loopThread: pthread_t?
    }
    private let shared: Mutex<Shared>

    init(spec: BoardSpec, profile: MemoryMapProfile, options: BoardOptions,
         fit: @escaping @Sendable (BoardIdentity) -> BoardFit,
         onEvent: @escaping @Sendable (BoardEvent) -> Void) throws(SystemError) {
        self.spec = spec
        self.profile = profile
        self.options = options
        self.fit = fit
        self.onEvent = onEvent
        wake = try EventFlag()
        finished = try EventFlag()
        shared = Mutex(Shared(snapshot: BoardSnapshot(device: spec.device)))
    }

    func start(with transport: any BoardTransport) {
        shared.withLock { $0.started = true }
        let thread = Thread { [self] in
            shared.withLock { $0.loopThread = pthread_self() }
            var loop = ConnectionLoop(core: self, transport: transport)
            loop.run()
            shared.withLock { $0.stopped = true }
            finished.raise()
        }
        thread.name = "board \(spec.device)"
        thread.start()
    }

    // MARK: owner side

    func setDesired(_ values: [UInt8: UInt8]) {
        guard !values.isEmpty else { return }
        shared.withLock { s in
            s.pending.merge(values) { $1 }
            s.requested &+= 1
        }
        wake.raise()
    }

    var onLoopThread: Bool {
        shared.withLock { s in s.loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func writeSafeState(timeout: Duration) -> Bool {
        // From inside onEvent the loop cannot make progress while we wait: do not deadlock.
        if onLoopThread {
            shared.withLock { s in
                s.wantsSafe = true
                s.requested &+= 1
            }
            wake.raise()
            return false
        }
        let deadline = ContinuousClock.now + timeout
        guard let flag = try? EventFlag() else { return false }
        let id = ObjectIdentifier(flag)
        let generation: UInt64 = shared.withLock { s in
            s.wantsSafe = true
            s.requested &+= 1
            s.waiters[id] = flag
            return s.requested
        }
        wake.raise()
        defer { _ = shared.withLock { $0.waiters.removeValue(forKey: id) } }
        while true {
            let (done, stopped) = shared.withLock { s in ((s.safeConfirmed ?? 0) >= generation, s.stopped) }
            if done { return true }
            if stopped || ContinuousClock.now >= deadline { return false }
            _ = try? Poller.wait([(flag.descriptor.rawValue, .readable)], until: deadline)
            flag.clear()
        }
    }

    var snapshot: BoardSnapshot { shared.withLock { $0.snapshot } }

    /// Waits until `condition` holds for the published snapshot, the loop stops, or `timeout`.
    func waitUntil(timeout: Duration, _ condition: @escaping (BoardSnapshot) -> Bool) -> BoardSnapshot? {
        let deadline = ContinuousClock.now + timeout
        guard let flag = try? EventFlag() else { return nil }
        let id = ObjectIdentifier(flag)
        shared.withLock { $0.waiters[id] = flag }
        defer { _ = shared.withLock { $0.waiters.removeValue(forKey: id) } }
        while true {
            let (snapshot, stopped) = shared.withLock { ($0.snapshot, $0.stopped) }
            if condition(snapshot) { return snapshot }
            if stopped || ContinuousClock.now >= deadline { return nil }
            _ = try? Poller.wait([(flag.descriptor.rawValue, .readable)], until: deadline)
            flag.clear()
        }
    }

    func stop() {
        let wasRunning = shared.withLock { s -> Bool in
            let running = s.started && !s.stopped && !s.stopRequested
            s.stopRequested = true
            return running
        }
        guard wasRunning else { return }
        wake.raise()
        if onLoopThread { return }   // close() from inside onEvent: the loop ends after this step
        // Joins the thread: it finishes the current step (at most one poll wake-up) and exits.
        while !shared.withLock({ $0.stopped }) {
            _ = try? Poller.wait([(finished.descriptor.rawValue, .readable)], timeout: .seconds(1))
        }
    }

    // MARK: loop side

    var wakeDescriptor: Int32 { wake.descriptor.rawValue }

    /// Takes the values set since the last call, whether the safe state was asked for (after
    /// those values), and whether to stop.
    func takeRequests() -> (values: [UInt8: UInt8], safe: Bool, generation: UInt64, stop: Bool) {
        wake.clear()
        return shared.withLock { s in
            defer { s.pending = [:]; s.wantsSafe = false }
            return (s.pending, s.wantsSafe, s.requested, s.stopRequested)
        }
    }

    /// Publishes the loop's view and wakes anyone waiting for the safe state.
    func publish(absorbed: UInt64, safeConfirmed: Bool, _ update: (inout BoardSnapshot) -> Void) {
        let waiters: [EventFlag] = shared.withLock { s in
            s.absorbed = absorbed
            if safeConfirmed { s.safeConfirmed = absorbed }
            update(&s.snapshot)
            return Array(s.waiters.values)
        }
        for w in waiters { w.raise() }
    }
}

/// The connection's thread: owns the device, the writer and the session.
struct ConnectionLoop {
    let core: ConnectionCore
    var transport: (any BoardTransport)?
    var writer: MemoryMapWriter
    var session: BoardSession
    var generation: UInt64 = 0
    var nextAttempt: ContinuousClock.Instant?
    /// This link came from a reconnect: report it once the safe state is confirmed.
    var reconnecting = false
    var lastError: String?
    var sent = 0
    var failed = 0
    var disconnections = 0

    init(core: ConnectionCore, transport: any BoardTransport) {
        self.core = core
        self.transport = transport
        writer = MemoryMapWriter(profile: core.profile, verifies: true)
        session = BoardSession(replyTimeout: core.options.replyTimeout)
    }

    var device: String { core.spec.device }

    mutating func run() {
        writer.connected()
        publish()
        core.onEvent(.connected(device: device))
        while true {
            let request = core.takeRequests()
            if request.stop { break }
            if !request.values.isEmpty { writer.setDesired(request.values) }
            if request.safe { writer.setDesired(writer.safeState) }
            generation = request.generation
            pump()
            publish()
            wait()
            if transport == nil, let at = nextAttempt, ContinuousClock.now >= at { reopen() }
        }
        transport?.close()
        transport = nil
        publish()
    }

    /// Starts the next write if the link is idle.
    mutating func pump() {
        guard let t = transport, session.isIdle, let command = writer.nextCommand() else { return }
        let line = session.start(command, now: .now)
        do {
            try t.send(line, timeout: core.options.replyTimeout)
            sent += 1
        } catch {
            lose(error.cause)
        }
    }

    /// Sleeps until the device has bytes or hangs up, the owner wakes us, a reply times out, or
    /// it is time to reopen.
    mutating func wait() {
        var fds: [(fd: Int32, events: Poller.Events)] = [(core.wakeDescriptor, .readable)]
        if let t = transport { fds += t.readDescriptors.map { ($0, Poller.Events.readable) } }
        let deadline = [session.deadline, transport == nil ? nextAttempt : nil].compactMap { $0 }.min()
        let ready: [Poller.Events]
        do {
            ready = try Poller.wait(fds, until: deadline)
        } catch {
            lastError = "\(device): poll: \(error.reason)"
            return
        }
        if let t = transport, ready.count > 1 {
            let device = ready.dropFirst()
            if device.contains(where: { $0.contains(.readable) || $0.contains(.hangUp) }) {
                drain(t)
            }
            if transport != nil, device.contains(where: { $0.contains(.hangUp) }) {
                lose("hang-up (the board went away)")
            }
        }
        if transport != nil, let event = session.checkTimeout(now: .now) {
            handle(event)
            if session.consecutiveTimeouts >= core.options.unansweredLimit {
                lose("the board stopped answering (\(session.consecutiveTimeouts) commands without a reply)")
            }
        }
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
        }
    }

    mutating func handle(_ event: BoardSession.Event) {
        switch event {
        case .completed(_, let response):
            switch writer.completed(response) {
            case .identified(let identity)?:
                switch core.fit(identity) {
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
                core.onEvent(.reconnected(device: device))
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
        publish()
        core.onEvent(.refused(device: device, reason: reason))
    }

    /// The device is gone: close it, tell the owner, and plan the next open.
    mutating func lose(_ reason: String) {
        transport?.close()
        transport = nil
        session.reset()
        writer.disconnected()
        reconnecting = false
        disconnections += 1
        lastError = "\(device): \(reason)"
        nextAttempt = .now + core.options.reconnectInterval
        publish()
        core.onEvent(.disconnected(device: device, reason: reason))
    }

    mutating func reopen() {
        do {
            transport = try BoardTransports.open(core.spec, profile: core.profile)
            session.reset()
            writer.connected()
            reconnecting = true
            nextAttempt = nil
        } catch {
            lastError = error.message
            nextAttempt = .now + core.options.reconnectInterval
        }
    }

    func publish() {
        let safe = writer.safeState
        var safeConfirmed = transport != nil && (writer.identity != nil || writer.refusal != nil)
            && !writer.isWritingSafeState && writer.isConfirmed(safe)
        if safeConfirmed, case let .write(address, bytes)? = writer.outstanding {
            // A write on the wire that would overwrite a safe value: not safe yet.
            for (i, b) in bytes.enumerated() where safe[address &+ UInt8(i)].map({ $0 != b }) ?? false {
                safeConfirmed = false
            }
        }
        let (connected, confirmed, sent, failed, disconnections, lastError) =
            (transport != nil, writer.confirmed, self.sent, self.failed, self.disconnections, self.lastError)
        let identity = transport == nil ? nil : writer.identity
        let refusal = transport == nil ? nil : writer.refusal
        let known = transport != nil && refusal == nil && writer.identity != nil && !writer.isWritingSafeState
        let profile = known ? writer.profile : nil
        core.publish(absorbed: generation, safeConfirmed: safeConfirmed) { s in
            s.isConnected = connected
            s.confirmed = confirmed
            s.commandsSent = sent
            s.commandsFailed = failed
            s.disconnections = disconnections
            s.lastError = lastError
            s.identity = identity
            s.refusal = refusal
            s.profile = profile
        }
    }
}
