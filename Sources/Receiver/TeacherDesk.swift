import ControlPlane
import ControlWire
import RemoteWire

/// The receiver's side of the teacher's dashboard as a value type with an injected clock
/// (Protocol.md §7.10–§7.12): who watches and when each watcher's next report is due, the pings
/// that measure the driver's round trip, the identify blink, kicked sources and the student lock.
/// It sends nothing and touches no board: ``ReceiverMachine`` asks it and acts.
///
/// Bounds: at most ``maxWatchers`` watchers (the stalest is replaced), one report per watcher
/// per ``reportPeriod``, one ping per ``pingPeriod`` and only while watched, link samples of
/// the last ``linkWindow``, at most ``KickHold/capacity`` kicks held.
package struct TeacherDesk<Source: Hashable & Sendable>: Sendable {
    package static var reportPeriod: Duration { .milliseconds(500) }
    package static var pingPeriod: Duration { .milliseconds(500) }
    package static var linkWindow: Duration { .seconds(5) }
    /// A ping without a pong after this long counts as lost.
    package static var pingTimeout: Duration { .seconds(1) }
    package static var identifyLength: Duration { .seconds(3) }
    /// The blink's half period: LED 1 and LED 2 swap, the buzzer sounds on every other one.
    package static var blinkStep: Duration { .milliseconds(250) }
    /// A kicked student may not take the robot back for this long (``KickHold``).
    package static var kickHold: Duration { KickHold<Source>.duration }
    package static var maxWatchers: Int { 8 }

    struct Watcher: Sendable {
        var until: ContinuousClock.Instant
        var next: ContinuousClock.Instant
        /// The nonce of the `watch` this watcher last renewed with: its reports are signed for it.
        var nonce: UInt64
        /// Counts on across renewals; only a new watcher starts again from 1.
        var serial: UInt32 = 0
    }

    struct Ping: Sendable {
        var id: UInt32
        var sent: ContinuousClock.Instant
        var roundTrip: Duration?
    }

    package let started: ContinuousClock.Instant
    var watchers: [Source: Watcher] = [:]
    var pings: [Ping] = []
    var pingSource: Source?
    var nextPing: ContinuousClock.Instant?
    var nextPingID: UInt32 = 1
    package private(set) var identifyStarted: ContinuousClock.Instant?
    /// Who was kicked, held by source, name and host (``KickHold``).
    package var kicks = KickHold<Source>()
    /// The display name the teacher locked the robot to.
    package var lockedTo: WireText?
    /// The engine's state count at the last report, for states per second.
    var statesAtLast: (count: Int, at: ContinuousClock.Instant)?

    package init(now: ContinuousClock.Instant) { started = now }

    package var isWatched: Bool { !watchers.isEmpty }

    /// A watch with `nonce` was taken from `source`: reports to it, signed for that nonce, for
    /// ``TeacherCommand/watchLifetime``; a new watcher gets its first report at once. A renewal
    /// keeps the serial counting and signs the reports from now on for its own nonce.
    package mutating func watch(from source: Source, nonce: UInt64, now: ContinuousClock.Instant) {
        if var w = watchers[source] {
            w.until = now + TeacherCommand.watchLifetime
            w.nonce = nonce
            watchers[source] = w
            return
        }
        if watchers.count >= Self.maxWatchers, let stalest = watchers.min(by: { $0.value.until < $1.value.until }) {
            watchers.removeValue(forKey: stalest.key)
        }
        watchers[source] = Watcher(until: now + TeacherCommand.watchLifetime, next: now, nonce: nonce)
    }

    /// The watchers a report is due to now, with the serial of that report and the watch nonce
    /// to sign it for; forgets expired ones.
    package mutating func reportsDue(now: ContinuousClock.Instant) -> [(source: Source, serial: UInt32, nonce: UInt64)] {
        var out: [(source: Source, serial: UInt32, nonce: UInt64)] = []
        for (source, var w) in watchers {
            if now >= w.until { watchers.removeValue(forKey: source); continue }
            guard now >= w.next else { continue }
            w.serial &+= 1
            // Never more than one per period, even after a late wake-up.
            w.next = max(w.next + Self.reportPeriod, now + Self.reportPeriod / 2)
            watchers[source] = w
            out.append((source, w.serial, w.nonce))
        }
        return out
    }

    /// States per second since the last call (`states`: the engine's running count).
    package mutating func statesPerSecond(states: Int, now: ContinuousClock.Instant) -> UInt16 {
        defer { statesAtLast = (states, now) }
        guard let last = statesAtLast, now > last.at else { return 0 }
        let seconds = Double((now - last.at).components.attoseconds) / 1e18 + Double((now - last.at).components.seconds)
        guard seconds >= 0.2 else { return 0 }
        return UInt16(clamping: Int((Double(states - last.count) / seconds).rounded()))
    }

    // MARK: The driver's round trip

    /// A ping is due to `driver` now (only while watched); returns its id. A new driver starts
    /// a new measurement.
    package mutating func pingDue(driver: Source?, now: ContinuousClock.Instant) -> UInt32? {
        guard isWatched, let driver else { pings.removeAll(); pingSource = nil; return nil }
        if driver != pingSource { pings.removeAll(); pingSource = driver; nextPing = now }
        pings.removeAll { now - $0.sent > Self.linkWindow }
        guard let due = nextPing, now >= due else { return nil }
        nextPing = now + Self.pingPeriod
        let id = nextPingID
        nextPingID = nextPingID == .max ? 1 : nextPingID + 1
        pings.append(Ping(id: id, sent: now))
        return id
    }

    package mutating func pong(id: UInt32, from source: Source, now: ContinuousClock.Instant) {
        guard source == pingSource, let i = pings.firstIndex(where: { $0.id == id }), pings[i].roundTrip == nil else { return }
        pings[i].roundTrip = now - pings[i].sent
    }

    /// Mean and max round trip (ms) and loss (per mille) over the window; ``WatchReport/unknown``
    /// before any ping resolved.
    package func link(now: ContinuousClock.Instant) -> (mean: UInt16, max: UInt16, loss: UInt16) {
        let resolved = pings.filter { $0.roundTrip != nil || now - $0.sent > Self.pingTimeout }
        let times = resolved.compactMap(\.roundTrip).map { Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1000 }
        guard !resolved.isEmpty else { return (WatchReport.unknown, WatchReport.unknown, WatchReport.unknown) }
        let loss = UInt16((resolved.count - times.count) * 1000 / resolved.count)
        guard !times.isEmpty else { return (WatchReport.unknown, WatchReport.unknown, loss) }
        let mean = times.reduce(0, +) / Double(times.count)
        return (UInt16(clamping: Int(mean.rounded())), UInt16(clamping: Int(times.max()!.rounded())), loss)
    }

    // MARK: Identify

    package mutating func identify(now: ContinuousClock.Instant) { identifyStarted = now }

    package func identifying(now: ContinuousClock.Instant) -> Bool {
        identifyStarted.map { now - $0 < Self.identifyLength } ?? false
    }

    /// The blink's values now for the LEDs and the buzzer (nil when not identifying): the LEDs
    /// swap every ``blinkStep``; the buzzer gets a short tone on every other step (a change of
    /// its bytes is what starts a tone on the board, §4.5).
    package func identifyValues(now: ContinuousClock.Instant, led1: UInt8, led2: UInt8, tone: UInt8, time: UInt8) -> [UInt8: UInt8]? {
        guard let start = identifyStarted, identifying(now: now) else { return nil }
        let step = Int((now - start) / Self.blinkStep)
        let on = step % 2 == 0
        return [led1: on ? 255 : 0, led2: on ? 0 : 255, tone: on ? 34 : 0, time: on ? 12 : 0]
    }

    /// When the blink next changes (or ends).
    package func identifyDeadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard let start = identifyStarted, identifying(now: now) else { return nil }
        let steps = Int((now - start) / Self.blinkStep) + 1
        return start + Self.blinkStep * steps
    }

    /// The blink has ended: forget it (the caller restores the LEDs and the buzzer once).
    package mutating func identifyEnded(now: ContinuousClock.Instant) -> Bool {
        guard identifyStarted != nil, !identifying(now: now) else { return false }
        identifyStarted = nil
        return true
    }

    // MARK: Kick and lock

    /// The teacher kicked `source` (from `host`, the same address with any port; `name`: its
    /// hello's display name, nil for a plain sender).
    package mutating func kick(_ source: Source, host: Source, name: WireText?, now: ContinuousClock.Instant) {
        kicks.kick(source, host: host, name: name, now: now)
    }

    /// May `source` (from `host`, display name `name`, nil for a plain sender) drive, as far as
    /// the teacher is concerned: not held by a kick (``KickHold``), and the lock's student if locked.
    package func allows(_ source: Source, host: Source, name: WireText?, now: ContinuousClock.Instant) -> Bool {
        if !kicks.isEmpty, kicks.verdict(source, host: host, name: name, now: now) != .free { return false }
        if let lockedTo { return name == lockedTo }
        return true
    }

    /// Whether any kick is remembered or the robot is locked (else ``allows(_:host:name:now:)`` is
    /// true). Kicks stay remembered after their hold ended until ``forgetEndedKicks(now:)``.
    package var restricts: Bool { !kicks.isEmpty || lockedTo != nil }

    /// Forgets the kicks once every hold has ended (so ``restricts`` turns false again); true if it did.
    package mutating func forgetEndedKicks(now: ContinuousClock.Instant) -> Bool {
        guard !kicks.isEmpty, kicks.isIdle(now: now) else { return false }
        kicks.removeAll()
        return true
    }

    /// Whether `source` itself was kicked (or turned away) and is still held.
    package func isKicked(_ source: Source, now: ContinuousClock.Instant) -> Bool {
        kicks.holds(exactly: source, now: now)
    }

    /// The next instant something here is due.
    package func deadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        // Asked on every wake-up of the receive loop: nothing to build when nobody watches and
        // nothing blinks; otherwise no array and no key path (`\.next` on a type nested in this
        // generic one is instantiated by the runtime on every call).
        if watchers.isEmpty && identifyStarted == nil { return nil }
        var earliest: ContinuousClock.Instant?
        func consider(_ t: ContinuousClock.Instant) { earliest = earliest.map { min($0, t) } ?? t }
        for watcher in watchers.values { consider(watcher.next) }
        if isWatched, let nextPing { consider(nextPing) }
        if let d = identifyDeadline(now: now) { consider(d) }
        if identifyStarted != nil, !identifying(now: now) { consider(now) }
        return earliest
    }
}
