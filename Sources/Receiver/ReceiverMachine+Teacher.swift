import BoardProtocol
import ControlPlane
import ControlWire
import DriveRecord
import Logging
import RemoteWire
import SystemIO

/// The teacher's dashboard, receiver side (Protocol.md §7.10–§7.12): watch reports, identify,
/// kick, lock. Reports and pings go out only while a dashboard watches; nothing here runs per
/// state packet except ``teacherAllows(_:at:)``, one comparison while nobody is kicked or locked.
extension ReceiverMachine {
    /// A teacher command the control plane took.
    mutating func teacherCommand(_ command: TeacherCommand, from source: SocketAddress, at now: Tick) {
        let instant = now.instant
        switch command.action {
        case .watch:
            if !desk.isWatched { log(.notice, "watched by the teacher's dashboard", ["from": "\(source)"]) }
            desk.watch(from: source, nonce: command.nonce, now: instant)
        case .identify:
            log(.notice, "identify: the board blinks its LEDs and beeps for 3 s (motors untouched)")
            desk.identify(now: instant)
            writeIdentify(now: instant)
        case .kick:
            guard let owner = engine.ownership.owner ?? reporter.lastOwner else {
                log(.notice, "kick: nobody drives this robot")
                return
            }
            let why = command.argument.isEmpty ? "the teacher freed this robot" : "the teacher freed this robot: \(command.argument)"
            kick(owner, deny: .init(reason: .kicked, text: WireText(why)), at: now)
        case .lock:
            desk.lockedTo = command.argument
            log(.notice, "locked by the teacher: only \"\(command.argument)\" may drive")
            if let owner = engine.ownership.owner, plane.displayName(of: owner) != command.argument {
                kick(owner, deny: .init(reason: .locked, text: "the teacher gave this robot to \(command.argument)"), at: now)
            }
        case .unlock:
            desk.lockedTo = nil
            log(.notice, "unlocked by the teacher: anyone may drive")
        }
    }

    /// Frees the robot from `source`: motors stop (as at a bye), the driver gets a deny that says
    /// why, and it may not take the robot back for ``TeacherDesk/kickHold`` — by its name, or by
    /// its address when it has none (``KickHold``).
    mutating func kick(_ source: SocketAddress, deny: ControlMessage.Deny, at now: Tick) {
        let instant = now.instant
        let named = plane.displayName(of: source)
        let name = named ?? "\(source)"
        log(.notice, "kicked by the teacher: \(deny.text)", ["controller": "\(name)", "address": "\(source)"])
        desk.kick(source, host: source.anyPort, name: named, now: instant)
        if plane.peers.hasChannel(source) {
            sendReport(reporter.denied(deny), to: source)
            handle(plane.deny(deny, to: source, now: instant), at: now)
        }
        reporter.left(source)
        apply(engine.released(source, at: now))
    }

    /// May `source` drive as far as the teacher is concerned (not kicked; the lock's student)?
    mutating func teacherAllows(_ source: SocketAddress, at now: Tick) -> Bool {
        // Called for every state packet: without a kick or a lock nothing is looked at.
        guard deskSummary.restricts else { return true }
        let instant = now.instant
        // Every hold over and no lock: forget the kicks, so the next datagrams skip all this.
        if desk.lockedTo == nil, desk.kicks.isIdle(now: instant) {
            _ = desk.forgetEndedKicks(now: instant)
            return true
        }
        return desk.allows(source, host: source.anyPort, name: plane.displayName(of: source), now: instant)
    }

    /// A state packet the teacher does not let through. A controller that said hello is told why
    /// once: one held by a kick (the kicked student under a new port or address) with reason
    /// `kicked` and the seconds left, without moving the hold's end; one that meets a lock is
    /// kicked with reason `locked`. Anything else (a plain sender) is just dropped.
    mutating func refusedByTeacher(_ source: SocketAddress, at now: Tick) {
        guard plane.peers.hasChannel(source), let name = plane.displayName(of: source) else { return }
        let instant = now.instant
        let host = source.anyPort
        if case .held(let until, let told) = desk.kicks.verdict(source, host: host, name: name, now: instant) {
            guard !told else { return }
            desk.kicks.turnedAway(source, host: host, until: until, now: instant)
            let seconds = Int(((until - instant) / .seconds(1)).rounded(.up))
            let deny = ControlMessage.Deny(reason: .kicked, text: "the teacher freed this robot from \(name): it can be taken back in \(seconds) s")
            log(.notice, "refused a kicked student: \(deny.text)", ["controller": "\(name)", "address": "\(source)"])
            sendReport(reporter.denied(deny), to: source)
            handle(plane.deny(deny, to: source, now: instant), at: now)
            reporter.left(source)
            return
        }
        guard let lock = desk.lockedTo, !desk.isKicked(source, now: instant) else { return }
        kick(source, deny: .init(reason: .locked, text: "the teacher gave this robot to \(lock)"), at: now)
    }

    /// Once per wake-up: the identify blink, pings to the driver, reports due.
    mutating func serveTeacher(at now: Tick) {
        // Nothing to look at unless a blink runs or someone watches.
        guard !deskSummary.idle else { return }
        let instant = now.instant
        if desk.identifyEnded(now: instant) {
            // Back to what the mapping wants for those outputs (the engine's last values).
            let a = settings.identify
            actions.append(.board(Dictionary([a.led1, a.led2, a.tone, a.time].map { ($0, engine.board[$0] ?? 0) },
                                             uniquingKeysWith: { $1 })))
        } else if desk.identifying(now: instant) {
            writeIdentify(now: instant)
        }
        guard desk.isWatched else { return }
        let driver = engine.ownership.owner
        if let id = desk.pingDue(driver: driver, now: instant), let driver {
            handle(plane.ping(id: id, sentNanos: UInt64(id), to: driver), at: now)
        }
        let due = desk.reportsDue(now: instant)
        guard !due.isEmpty else { return }
        let report = watchReport(now: instant)
        for (watcher, serial, nonce) in due {
            var r = report
            r.serial = serial
            handle(plane.watchReport(r, watchNonce: nonce, to: watcher), at: now)
        }
    }

    /// The dashboard's row for this robot now (serial filled in per watcher).
    mutating func watchReport(now: ContinuousClock.Instant) -> WatchReport {
        let who = engine.ownership.owner ?? reporter.lastOwner
        let state: RobotReport.State = who.map { reporter.state(for: $0, engine: engine, name: { "\($0)" }) }
            ?? (reporter.boardMissing.map { .boardMissing(why: $0) } ?? (engine.stoppedByTeacher ? .teacherStop : .free))
        let link = desk.link(now: now)
        var flags: UInt8 = 0
        if desk.lockedTo != nil { flags |= WatchReport.lockedFlag }
        if desk.identifying(now: now) { flags |= WatchReport.identifyingFlag }
        let uptime = now - desk.started
        let statesPerSecond = desk.statesPerSecond(states: engine.counters.states, now: now)
        return WatchReport(serial: 0, uptimeSeconds: UInt32(clamping: uptime.components.seconds), state: state, flags: flags,
                           robotID: plane.settings.robotID?.value ?? plane.settings.peerID, rttMeanMillis: link.mean, rttMaxMillis: link.max, lossPerMille: link.loss,
                           statesPerSecond: statesPerSecond,
                           failsafes: UInt32(clamping: engine.counters.failsafeTrips),
                           name: WireText(plane.settings.displayName), driver: who.map { plane.displayName(of: $0) ?? "\($0)" } ?? "", lockedTo: desk.lockedTo ?? "",
                           board: reporter.board, transport: WireText(Self.transport(settings.boardSpec)), version: WireText(settings.version),
                           sensors: reporter.boardMissing == nil ? latestSensors?.block : nil)   // none while the board is missing
    }

    /// `serial`, `midi`, `sim`… : the `--board` spec's kind.
    static func transport(_ spec: String) -> String {
        String(spec.split(separator: ":", maxSplits: 1).first ?? "")
    }

    mutating func writeIdentify(now: ContinuousClock.Instant) {
        let a = settings.identify
        if let values = desk.identifyValues(now: now, led1: a.led1, led2: a.led2, tone: a.tone, time: a.time) {
            actions.append(.board(values))
        }
    }

    /// An engine write while identifying: everything but the blink's outputs (the motors above all)
    /// goes through; the blink's outputs are restored from the engine when it ends.
    func withoutIdentify(_ values: [UInt8: UInt8]) -> [UInt8: UInt8] {
        guard !deskSummary.idle, desk.identifyStarted != nil else { return values }
        let a = settings.identify
        return values.filter { ![a.led1, a.led2, a.tone, a.time].contains($0.key) }
    }

    // MARK: The black box

    /// After every engine step, with `--black-box`: the applied state when it changed, the board
    /// values, owner changes, failsafes and the teacher's stop (the last two also write it out).
    mutating func record(_ step: Engine.Step) {
        let applied = engine.applied.map { (angle: $0.angle, buttons: $0.buttons.rawValue) }
        let stateChanged = applied?.angle != lastRecorded?.angle || applied?.buttons != lastRecorded?.buttons
        guard step.write != nil || !step.notices.isEmpty || stateChanged else { return }
        if let applied, stateChanged {
            actions.append(.record(.state(angle: applied.angle, buttons: applied.buttons)))
        }
        lastRecorded = applied
        if let values = step.write {
            actions.append(.record(.board(values.sorted { $0.key < $1.key }.map { BoardValue(address: $0.key, value: $0.value) })))
        }
        for notice in step.notices {
            switch notice {
            case .tookOwnership(let source, _):
                actions.append(.record(.owner(plane.displayName(of: source)?.text ?? source.description)))
            case .ownerSilent, .ownerLeft:
                actions.append(.record(.owner(nil)))
            case .failsafe(let reason):
                actions.append(.record(.failsafe(cause: reason == .boardLink ? "board-link" : reason.rawValue)))
                actions.append(.writeBlackBox("failsafe"))
            case .resumed:
                actions.append(.record(.resumed))
            case .teacher(let stopped):
                actions.append(.record(.teacher(stopped: stopped)))
                if stopped { actions.append(.writeBlackBox("teacher stop")) }
            default:
                break
            }
        }
    }
}
