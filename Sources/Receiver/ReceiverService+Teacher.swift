import BoardProtocol
import ControlPlane
import ControlWire
import Logging
import RemoteWire
import SystemIO

/// The teacher's dashboard, receiver side (Protocol.md §7.10–§7.12): watch reports, identify,
/// kick, lock. Reports and pings go out only while a dashboard watches; nothing here runs per
/// state packet except ``teacherAllows(_:at:)``, one dictionary lookup.
extension ReceiverService {
    /// A teacher command the control plane took.
    func teacherCommand(_ command: TeacherCommand, from source: SocketAddress, at now: ContinuousClock.Instant) {
        switch command.action {
        case .watch:
            if !desk.isWatched { logger.notice("watched by the teacher's dashboard", metadata: ["from": "\(source)"]) }
            desk.watch(from: source, nonce: command.nonce, now: now)
        case .identify:
            logger.notice("identify: the board blinks its LEDs and beeps for 3 s (motors untouched)")
            desk.identify(now: now)
            writeIdentify(now: now)
        case .kick:
            guard let owner = engine.ownership.owner ?? reporter.lastOwner else {
                logger.notice("kick: nobody drives this robot")
                return
            }
            let why = command.argument.isEmpty ? "the teacher freed this robot" : "the teacher freed this robot: \(command.argument)"
            kick(owner, deny: .init(reason: .kicked, text: why), at: now)
        case .lock:
            desk.lockedTo = command.argument
            logger.notice("locked by the teacher: only \"\(command.argument)\" may drive")
            if let owner = engine.ownership.owner, plane.displayName(of: owner) != command.argument {
                kick(owner, deny: .init(reason: .locked, text: "the teacher gave this robot to \(command.argument)"), at: now)
            }
        case .unlock:
            desk.lockedTo = nil
            logger.notice("unlocked by the teacher: anyone may drive")
        }
    }

    /// Frees the robot from `source`: motors stop (as at a bye), the driver gets a deny that says
    /// why, and it may not take the robot back for ``TeacherDesk/kickHold`` — by its name, or by
    /// its address when it has none (``KickHold``).
    func kick(_ source: SocketAddress, deny: ControlMessage.Deny, at now: ContinuousClock.Instant) {
        let named = plane.displayName(of: source)
        let name = named ?? "\(source)"
        logger.notice("kicked by the teacher: \(deny.text)", metadata: ["controller": "\(name)", "address": "\(source)"])
        desk.kick(source, host: source.anyPort, name: named, now: now)
        if plane.peers.hasChannel(source) {
            sendReport(reporter.denied(deny), to: source)
            handle(plane.deny(deny, to: source, now: now), at: now)
        }
        reporter.left(source)
        apply(engine.released(source, at: now))
    }

    /// May `source` drive as far as the teacher is concerned (not kicked; the lock's student)?
    func teacherAllows(_ source: SocketAddress, at now: ContinuousClock.Instant) -> Bool {
        // Called for every state packet. Without a kick or a lock nothing is looked at; the name
        // is read before the call, because an autoclosure over `self` made the compiler copy the
        // whole desk for each call (callgrind: 840 instructions a datagram).
        guard deskSummary.restricts else { return true }
        // Every hold over and no lock: forget the kicks, so the next datagrams skip all this.
        if desk.lockedTo == nil, desk.kicks.isIdle(now: now) {
            _ = desk.forgetEndedKicks(now: now)
            return true
        }
        return desk.allows(source, host: source.anyPort, name: plane.displayName(of: source), now: now)
    }

    /// A state packet the teacher does not let through. A controller that said hello is told why
    /// once: one held by a kick (the kicked student under a new port or address) with reason
    /// `kicked` and the seconds left, without moving the hold's end; one that meets a lock is
    /// kicked with reason `locked`. Anything else (a plain sender) is just dropped.
    func refusedByTeacher(_ source: SocketAddress, at now: ContinuousClock.Instant) {
        guard plane.peers.hasChannel(source), let name = plane.displayName(of: source) else { return }
        let host = source.anyPort
        if case .held(let until, let told) = desk.kicks.verdict(source, host: host, name: name, now: now) {
            guard !told else { return }
            desk.kicks.turnedAway(source, host: host, until: until, now: now)
            let seconds = Int(((until - now) / .seconds(1)).rounded(.up))
            let deny = ControlMessage.Deny(reason: .kicked, text: "the teacher freed this robot from \(name): it can be taken back in \(seconds) s")
            logger.notice("refused a kicked student: \(deny.text)", metadata: ["controller": "\(name)", "address": "\(source)"])
            sendReport(reporter.denied(deny), to: source)
            handle(plane.deny(deny, to: source, now: now), at: now)
            reporter.left(source)
            return
        }
        guard let lock = desk.lockedTo, !desk.isKicked(source, now: now) else { return }
        kick(source, deny: .init(reason: .locked, text: "the teacher gave this robot to \(lock)"), at: now)
    }

    /// Once per loop turn: the identify blink, pings to the driver, reports due.
    func serveTeacher(at now: ContinuousClock.Instant) {
        // Every wake-up: nothing to look at unless a blink runs or someone watches.
        guard !deskSummary.idle else { return }
        if desk.identifyEnded(now: now) {
            // Back to what the mapping wants for those outputs (the engine's last values).
            let a = identifyAddresses
            board.setDesired(Dictionary([a.led1, a.led2, a.tone, a.time].map { ($0, engine.board[$0] ?? 0) }, uniquingKeysWith: { $1 }))
        } else if desk.identifying(now: now) {
            writeIdentify(now: now)
        }
        guard desk.isWatched else { return }
        let driver = engine.ownership.owner
        if let id = desk.pingDue(driver: driver, now: now), let driver {
            handle(plane.ping(id: id, sentNanos: UInt64(id), to: driver), at: now)
        }
        let due = desk.reportsDue(now: now)
        guard !due.isEmpty else { return }
        let report = watchReport(now: now)
        for (watcher, serial, nonce) in due {
            var r = report
            r.serial = serial
            handle(plane.watchReport(r, watchNonce: nonce, to: watcher), at: now)
        }
    }

    /// The dashboard's row for this robot now (serial filled in per watcher).
    func watchReport(now: ContinuousClock.Instant) -> WatchReport {
        let who = engine.ownership.owner ?? reporter.lastOwner
        let state: RobotReport.State = who.map { reporter.state(for: $0, engine: engine, name: { "\($0)" }) }
            ?? (reporter.boardMissing.map { .boardMissing(why: $0) } ?? (engine.stoppedByTeacher ? .teacherStop : .free))
        let link = desk.link(now: now)
        var flags: UInt8 = 0
        if desk.lockedTo != nil { flags |= WatchReport.lockedFlag }
        if desk.identifying(now: now) { flags |= WatchReport.identifyingFlag }
        let uptime = now - desk.started
        return WatchReport(serial: 0, uptimeSeconds: UInt32(clamping: uptime.components.seconds), state: state, flags: flags,
                           robotID: plane.settings.robotID?.value ?? plane.settings.peerID, rttMeanMillis: link.mean, rttMaxMillis: link.max, lossPerMille: link.loss,
                           statesPerSecond: desk.statesPerSecond(states: engine.counters.states, now: now),
                           failsafes: UInt32(clamping: engine.counters.failsafeTrips),
                           name: plane.settings.displayName, driver: who.map { plane.displayName(of: $0) ?? "\($0)" } ?? "", lockedTo: desk.lockedTo ?? "",
                           board: reporter.board, transport: Self.transport(configuration.boardName), version: configuration.version,
                           sensors: reporter.boardMissing == nil ? board.sensors?.block : nil)   // none while the board is missing
    }

    /// `serial`, `midi`, `sim`… : the `--board` spec's kind.
    static func transport(_ spec: String) -> String {
        String(spec.split(separator: ":", maxSplits: 1).first ?? "")
    }

    /// The outputs the identify blink uses: the probed profile's LEDs and buzzer, else the kit's.
    var identifyAddresses: (led1: UInt8, led2: UInt8, tone: UInt8, time: UInt8) {
        let p = boardResolution?.profile ?? .kit
        return (p.led1, p.led2, p.buzzerTone, p.buzzerTime)
    }

    func writeIdentify(now: ContinuousClock.Instant) {
        let a = identifyAddresses
        if let values = desk.identifyValues(now: now, led1: a.led1, led2: a.led2, tone: a.tone, time: a.time) {
            board.setDesired(values)
        }
    }

    /// An engine write while identifying: everything but the blink's outputs (the motors above all)
    /// goes through; the blink's outputs are restored from the engine when it ends.
    func withoutIdentify(_ values: [UInt8: UInt8]) -> [UInt8: UInt8] {
        guard !deskSummary.idle, desk.identifyStarted != nil else { return values }
        let a = identifyAddresses
        return values.filter { ![a.led1, a.led2, a.tone, a.time].contains($0.key) }
    }
}
