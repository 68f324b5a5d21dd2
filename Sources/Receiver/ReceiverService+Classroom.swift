#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ControlPlane
import Console
import ControlWire
import Logging
import RemoteWire
import SystemIO

/// The receive loop's side of the control plane (Protocol.md §7): rate limit before decoding,
/// state packets straight to the engine, control datagrams to ``ControlPlane``, and the effects
/// (bye, stop-all) back into the engine. Sends never wait: a full socket buffer drops the
/// datagram, and reliable ones are retransmitted.
extension ReceiverService {
    static func makeControlPlane(_ configuration: ReceiverConfiguration) -> ControlPlane<SocketAddress> {
        var settings = configuration.classroom
        settings.failsafe = configuration.failsafe
        if settings.peerID == 0 { settings.peerID = UInt64.random(in: 1...UInt64.max) }
        let connection = UInt32.random(in: 1...UInt32.max)
        var oneShot = UInt32.random(in: 1...UInt32.max)
        while oneShot == connection { oneShot = UInt32.random(in: 1...UInt32.max) }
        return ControlPlane(settings: settings, connection: connection, oneShotConnection: oneShot)
    }

    /// `first`, `any`, `paired` or `secret`, for the start-up log line.
    var acceptLabel: String { plane.settings.accept.rawValue }

    /// Start-up lines: the pairing code (also in the status line), the secret (words and a QR
    /// code, on stdout), the teacher key's presence.
    func announceClassroom() {
        let settings = plane.settings
        if settings.accept == .paired {
            logger.notice("pairing code \(settings.pairingCode): controllers start with --pair \(settings.pairingCode)")
        }
        if settings.accept == .secret, let secret = settings.secret {
            // The words go to the robot's screen only, never into a log line (docs/security.md);
            // a secret read from a file is the teacher's to hand out, and is not shown at all.
            if settings.showSecret { StandardOutput.write(SecretDisplay.text(secret)) }
            logger.notice(settings.showSecret
                          ? "authenticated mode: controllers need the robot's secret, the 12 words shown on this screen"
                          : "authenticated mode: controllers need the robot's secret (read from its file, not shown)")
        }
        if settings.teacherKey != nil {
            logger.info("stop-all needs the teacher key")
        }
    }

    /// One wake-up: drain the socket (``DatagramDrain``), then the owner's datagrams, then
    /// everyone else's. State packets go to the engine as they come; control messages wait for
    /// the end of the batch, so a state is never queued behind them (Protocol.md §7.3).
    ///
    /// Every datagram of the batch is handled at the instant the drain ended, except for the
    /// failsafe: a state counts from when it *arrived* (the kernel's stamp), so a receiver that
    /// was not scheduled for longer than the failsafe (a machine too busy to run it) does not
    /// take the states waiting in its queue for the controller's silence. A state that really
    /// arrived after the deadline still trips it.
    func receiveBatch() throws(SystemError) {
        try drain.fill(from: socket)
        // The batch's one clock reading, as a ``Tick``: the engine and the rate limits take it
        // per datagram without a `Duration` or an `Instant` in sight.
        let now = Tick.now()
        let wall = WallClock.now()
        var controls: [(bytes: [UInt8], from: SocketAddress, sealed: Bool)] = []
        let owner = engine.ownership.owner
        plane.owner = owner
        if let owner {
            drain.forEach { batch, i in
                guard batch.source(i) == owner else { return }
                if let c = take(batch.bytes(i), length: batch.length(i), from: owner, at: now,
                                arrived: DatagramDrain.arrival(batch, i, now: now, wall: wall)) { controls.append(c) }
            }
        }
        drain.forEach { batch, i in
            let source = batch.source(i)
            if let owner, source == owner { return }
            // Everyone else's control datagrams are handled where they arrived, before that
            // source's next datagram: an owner that moved to another of our addresses sends a
            // ping and then states from there, and the ping must re-associate it (Protocol.md
            // §6.4) before its first state from the new address is judged — in one batch too.
            if let c = take(batch.bytes(i), length: batch.length(i), from: source, at: now,
                            arrived: DatagramDrain.arrival(batch, i, now: now, wall: wall)) {
                handleControl(c.bytes, from: c.from, sealed: c.sealed, at: .now)
            }
        }
        // The owner's own control datagrams (a bye, say) after everyone's states: no stranger's
        // state in this batch is judged against a robot the owner has just freed.
        for control in controls { handleControl(control.bytes, from: control.from, sealed: control.sealed, at: .now) }
    }

    /// One datagram: the rate limits first (nothing decoded past them) — the budget shared by
    /// every source but the owner, then the source's own — then a state packet goes to the
    /// engine at once; anything else is counted by the engine and returned, to be handed to the
    /// control plane after the batch.
    func take(_ bytes: ArraySlice<UInt8>, length: Int, from source: SocketAddress,
              at now: Tick, arrived: Tick? = nil) -> (bytes: [UInt8], from: SocketAddress, sealed: Bool)? {
        if source != engine.ownership.owner, strangers?.take(at: now) == false {
            engine.limited(from: source, at: now)
            return nil
        }
        guard plane.admit(source, at: now) else {
            engine.limited(from: source, at: now)
            return nil
        }
        // An authenticated envelope (`--accept secret`) is opened here, in the batch: a sealed
        // state goes to the engine like a plain one; everything else about it counts as control.
        if plane.settings.accept == .secret, bytes.count == length, ControlPlane<SocketAddress>.isSealed(bytes) {
            let instant = now.instant
            let (opened, output) = plane.open(Array(bytes), from: source, now: instant)
            handle(output, at: instant)
            switch opened {
            case .state(let inner):
                apply(engine.datagram(inner, length: inner.count, from: source, at: now, arrived: arrived,
                                      admitted: plane.mayDriveSealed(source) && teacherAllows(source, at: instant)))
                return nil
            case .control(let inner):
                apply(engine.datagram(bytes, length: length, from: source, at: now))
                return (inner, source, true)
            case .refused:
                apply(engine.datagram(bytes, length: length, from: source, at: now))
                return nil
            }
        }
        // The desk is asked (and the tick made an instant) only while it restricts anyone.
        let teacherLets = length != StatePacket.size || !deskSummary.restricts || teacherAllows(source, at: now.instant)
        let admitted = length != StatePacket.size || (plane.mayDrive(source) && teacherLets)
        if !teacherLets { refusedByTeacher(source, at: now.instant) }
        apply(engine.datagram(bytes, length: length, from: source, at: now, arrived: arrived, admitted: admitted))
        if !admitted { handle(plane.refusedState(from: source, now: now.instant), at: now.instant) }
        return length == StatePacket.size ? nil : (Array(bytes), source, false)
    }

    func handleControl(_ bytes: [UInt8], from source: SocketAddress, sealed: Bool, at now: ContinuousClock.Instant) {
        handle(plane.control(bytes, from: source, now: now, unixMillis: WallClock.unixMillis(), sealed: sealed), at: now)
        if Self.isPing(bytes) { reporter.pinged(source) }
    }

    /// Sends what the plane asks for and applies its effects to the engine.
    func handle(_ output: ControlPlane<SocketAddress>.Output, at now: ContinuousClock.Instant) {
        for (to, datagram) in output.datagrams {
            do {
                _ = try socket.send(datagram, to: to)
            } catch {
                limited(["to": "\(to)"]) { logger.debug("control reply not sent: \(error)", metadata: $0) }
            }
        }
        for effect in output.effects {
            switch effect {
            case .accepted(let source, let name):
                reporter.accepted(source)
                if helloNotices.allow(source, at: now) {
                    limited(["controller": "\(name)", "address": "\(source)"]) { logger.notice("controller said hello: accepted", metadata: $0) }
                }
            case .denied(_, nil, _):
                break   // a plain sender's states: logged once per source by the engine (notAdmitted)
            case .denied(let source, let name?, let deny):
                sendReport(reporter.denied(deny), to: source)
                guard helloNotices.allow(source, at: now) else { continue }
                limited(["controller": "\(name)", "address": "\(source)", "reason": "\(deny.reason.rawValue)"]) {
                    logger.notice("controller denied: \(deny.text)", metadata: $0)
                }
            case .left(let source, let name):
                var metadata: Logger.Metadata = ["address": "\(source)"]
                if let name { metadata["controller"] = "\(name)" }
                logger.notice("controller said bye", metadata: metadata)
                reporter.left(source)
                apply(engine.released(source, at: now))
            case .teacher(let stop, let source):
                logger.debug("stop-all taken", metadata: ["from": "\(source)", "stop": "\(stop)"])
                apply(engine.teacher(stop: stop, at: now))
            case .stopRefused(let source, let why):
                limited(["from": "\(source)"]) { logger.warning("stop-all refused: \(why)", metadata: $0) }
            case .malformed(let source, let error):
                limited(["controller": "\(source)"]) { logger.debug("\(error)", metadata: $0) }
            case .attemptFailed(let source, let what, let failed):
                limited(["address": "\(source)", "failed": "\(failed)"]) {
                    logger.warning("wrong \(what) tried", metadata: $0)
                }
            case .attemptThrottled(let source, let throttled):
                limited(["address": "\(source)", "throttled": "\(throttled)"]) {
                    logger.warning("attempt refused: too many pairing codes or secrets tried", metadata: $0)
                }
            case .envelopeRefused(let source, let why, let refused):
                limited(["address": "\(source)", "why": "\(why.rawValue)", "refused": "\(refused)"]) {
                    logger.warning("authenticated datagram refused", metadata: $0)
                }
            case .contenderDenied(let source, let name, let deny):
                guard helloNotices.allow(source, at: now) else { continue }
                limited(["controller": "\(name)", "address": "\(source)", "reason": "\(deny.reason.rawValue)"]) {
                    logger.notice("hello from the address of a live connection refused (that connection is untouched): \(deny.text)",
                                  metadata: $0)
                }
            case .moved(let old, let new, let name):
                let owner = engine.ownership.owner == old
                logger.notice(owner ? "the driving controller moved to a new address: still the owner" : "controller moved to a new address",
                              metadata: ["controller": "\(name ?? "-")", "from": "\(old)", "address": "\(new)"])
                apply(engine.moved(from: old, to: new, at: now))
            case .teacherCommand(let source, let command):
                teacherCommand(command, from: source, at: now)
            case .teacherRefused(let source, let action, let why):
                limited(["from": "\(source)", "action": "\(action.name)"]) { logger.warning("teacher command refused: \(why)", metadata: $0) }
            case .pong(let source, let id, _):
                desk.pong(id: id, from: source, now: now)
            }
        }
    }

    /// Engine notices that concern the classroom features.
    func logClassroom(_ notice: ReceiverEngine<SocketAddress>.Notice) {
        switch notice {
        case .notAdmitted(let source) where plane.mayDrive(source):
            limited(who(source)) { logger.notice("ignoring controller: the teacher kicked it or locked the robot to another student", metadata: $0) }
        case .notAdmitted(let source):
            limited(who(source)) {
                logger.notice("ignoring controller: not paired (this receiver runs --accept paired; the controller needs --pair CODE)",
                              metadata: $0)
            }
        case .ownerLeft(let source):
            logger.notice("owner said bye: motors stopped, robot free (the next controller must rest first)", metadata: who(source))
        case .teacher(let stopped):
            status.update(statusText(at: .now), force: true)
            if stopped {
                logger.warning("STOPPED BY TEACHER: motors 0, every state held until the teacher releases")
            } else {
                logger.notice("released by the teacher: waiting for a resting state (no forward/backward, level)")
            }
        default:
            break
        }
    }

    /// Log metadata for a source: its display name once it said hello, and its address.
    func who(_ source: SocketAddress) -> Logger.Metadata {
        guard let name = plane.displayName(of: source) else { return ["controller": "\(source)"] }
        return ["controller": "\(name)", "address": "\(source)"]
    }

    func logControlTotals() {
        let peers = plane.peers
        logger.debug("control plane", metadata: ["peers": "\(peers.count)", "limited": "\(peers.limited)",
                                                 "refused": "\(peers.refused)", "evicted": "\(peers.evicted)",
                                                 "wrong_connection": "\(peers.wrongConnection)",
                                                 "buffers_dropped": "\(peers.buffersDropped)"])
        let attempts = plane.attempts
        if attempts.failed > 0 || attempts.throttled > 0 || plane.envelopesRefused > 0 {
            logger.notice("security", metadata: ["wrong_attempts": "\(attempts.failed)", "throttled_attempts": "\(attempts.throttled)",
                                                 "envelopes_refused": "\(plane.envelopesRefused)"])
        }
    }
}
