import ControlPlane
import ControlWire
import Controller
import Foundation
import Logging
import PhoneLink
import RemoteWire
import Synchronization
import SystemIO

/// The dashboard's UDP side (Protocol.md §7.10–§7.12): while a dashboard is open, each robot of
/// the hub is asked who it is with an unsigned stop-all `query` until a reply signed with the
/// teacher key names it; from then on it gets a signed `watch` once a second, aimed at the robot
/// that signed (its robot id, else its signed display name, §7.6.1). The `watch-report`s,
/// `teacher-reply`s and `stop-all reply`s that come back fill one row per robot; the teacher's
/// buttons become signed stop-alls and teacher commands aimed the same way. One thread on a
/// ``LoopRunner``, one socket per robot (so a reply's robot is its socket): it wakes for a
/// reply, a command or a dashboard opening (its mailbox), or the next thing due (a watch, a
/// query, a repeat) — with no dashboard open and nothing to repeat, never on a timer. A
/// command's signed reply changes its row at once (``WatchReport/after(_:)``), the next report
/// confirms it; every change of a row moves ``changes``, which the dashboards' pushes wait on.
///
/// Identity only from signatures: a row's name, its robot id and the target of every signed
/// command come from messages that verify under the teacher key (a reply answering one of our
/// nonces, a report signed for one of our live watches, ``WatchReportGate``), or from the
/// roster and `--peer` the teacher typed. Nothing signed goes to a robot before it has proven
/// the key, and never for the empty target (every receiver of the session): a plain socket
/// listed as a robot gets only unsigned queries, so it has nothing to forward to a real robot.
/// A reply that does not verify is shown as what it is (``Row/unverified``) and changes
/// nothing else; the row's buttons stay off and say why (``Row/off``).
///
/// A robot whose answers come unsigned (a receiver without a teacher key, ``Row/keyless``) is
/// labelled by its address or the roster/`--peer` label, never by what it says, and takes one
/// thing only: Stop, sent to the address it answered from as a stop-all signed for the whole
/// session (empty target). Forwarded anywhere, that can only stop a robot of the session, which
/// is safe; a release, a kick, a lock or an identify is never sent that way.
///
/// A robot that has answered once keeps its row while the lesson runs: when DNS-SD no longer
/// lists it (a killed receiver's responder withdraws its service), the row stays, marked
/// ``Row/gone``, and is still asked at its last address, until it is listed again or the
/// teacher dismisses it (``dismiss(robot:)``). A killed receiver cannot write the safe state:
/// its robot may still be moving.
final class TeacherLink: Sendable {
    struct Row: Sendable {
        var id: String
        var label: String
        /// Where the robot is reached (and the only source its answers are read from).
        var address: String?
        /// The receiver's display name, from a message signed with the teacher key only.
        var name: String?
        var report: WatchReport?
        var heard: ContinuousClock.Instant?
        /// Why the robot will not be watched (its signed teacher-reply), or a command's refusal.
        var refusal: WireText?
        /// The last answer that did not verify under the teacher key, as what it is:
        /// `unverified reply from ADDR: …`. It never names the row nor aims a command.
        var unverified: String?
        /// Why the row's buttons cannot work (nil: they can): the robot has not proven the key.
        var off: String?
        /// The outcome of the last stop-all sent to it.
        var stop: String?
        /// Its answers come unsigned (no teacher key on it) and it has proven nothing: it takes
        /// only Stop, a session-wide signed stop-all to its address. Cleared once it proves the key.
        var keyless = false
        /// The last stop or release sent to it ("stop", "release") and when: all the dashboard
        /// knows of a keyless robot, with ``stop``.
        var sent: (action: String, at: ContinuousClock.Instant)?
        /// Where it last answered from (a kept row is still asked there).
        var reachedAt: SocketAddress?
        /// No longer among the hub's robots (DNS-SD removed it) but answered during the lesson:
        /// kept, and asked at its last address, until it is back or dismissed.
        var gone = false
    }

    /// The row's buttons are off until the robot proves the key.
    static let notReached = "not reached yet: no answer signed with the teacher key from this robot so far"
    static let notProven = "its buttons are off: this robot has not proven the teacher key (a receiver started without "
        + "--teacher-key or with another key, or not a robot at all), so the dashboard neither watches nor commands it"
    /// A keyless robot's other buttons: only Stop can be sent safely without its name.
    static let keylessOff = "no teacher key on this robot: only Stop reaches it (a stop-all for the whole session, sent to "
        + "the address it answered from); Release, Identify, Kick and Lock need the teacher key on the robot"

    enum Command: Sendable {
        case stop, release, identify, kick(String), lock(String), unlock
    }

    private struct State: Sendable {
        var rows: [String: Row] = [:]
        var dashboardsUntil: ContinuousClock.Instant?
        /// When the robots began to be watched this time (no dashboard was open before).
        var watchingSince: ContinuousClock.Instant?
        /// Roster students seen driving their robot during this lesson.
        var arrived: Set<String> = []
        /// Grows with every change of a robot's state, driver, lock or blink: a dashboard pushes
        /// soon after it changes.
        var version = 0
        /// Watch reports dropped as forged or stale since the server started, and when that was
        /// last logged.
        var dropped = 0
        var droppedLogged: (count: Int, at: ContinuousClock.Instant)?
        /// Rows the teacher dismissed, and when: hidden until the robot answers again.
        var dismissed: [String: ContinuousClock.Instant] = [:]
    }

    /// A dropped report is logged at once the first time, then at most once per this (with the
    /// count so far), so a forger cannot flood the log.
    static let dropLogPeriod: Duration = .seconds(10)

    private let state = Mutex(State())
    private let hub: PhoneHub
    private let key: [UInt8]
    /// The MAC key of the teacher key (the phone page's robot names are verified with it too).
    var macKey: [UInt8] { key }
    private let session: String
    private let logger: Logger
    let events: TeacherLog
    let roster: Roster?
    private let thread: LoopThread
    /// The link's thread: its mailbox takes the teacher's commands and the news that a
    /// dashboard opened; its stop is ``stop()``.
    private let runner: LoopRunner<Event>
    /// Moves whenever a row changes (``version``) or a dashboard must look again (``nudge()``).
    let changes = ChangeNotice()

    private enum Event: Sendable {
        case command(robot: String, Command)
        /// The first dashboard opened after none was: watch now.
        case dashboardOpened
        /// Stop all: the broadcast stop (``TeacherBroadcast``), before anything else.
        case stopEveryone
    }

    /// Told every robot that has proven the key (where its signed reply came from, the robot id
    /// it named) whenever that set changes; on the link's thread.
    private let onProven: (@Sendable ([(address: SocketAddress, robot: RobotID?)]) -> Void)?

    init(hub: PhoneHub, teacherKey: String, session: String, events: TeacherLog, roster: Roster? = nil, logger: Logger,
         onProven: (@Sendable ([(address: SocketAddress, robot: RobotID?)]) -> Void)? = nil) throws {
        self.onProven = onProven
        self.hub = hub
        // The same MAC key `stop-all --teacher-key-file` signs with (TeacherKey: a keygen key as
        // it is, a passphrase stretched with scrypt).
        key = try TeacherKey(text: teacherKey).macKey
        self.session = session
        self.events = events
        self.roster = roster
        self.logger = logger
        thread = try LoopThread(name: "teacher-link")
        runner = try LoopRunner(stopOn: StopSignals.none, mailboxCapacity: 256)
    }

    /// Told every watch report the link takes (verified, for one of its own live watches, newer
    /// than the last: ``report(_:from:robot:link:)``), with the time it was taken; on the link's
    /// thread. Nothing else the robots send reaches it: the robots' round is fed from here.
    private let reportTaken = Mutex<(@Sendable (WatchReport, ContinuousClock.Instant) -> Void)?>(nil)

    /// Sets the one observer of the taken reports (``reportTaken``).
    func onReportTaken(_ observer: @escaping @Sendable (WatchReport, ContinuousClock.Instant) -> Void) {
        reportTaken.withLock { $0 = observer }
    }

    /// `state.withLock`, and a push woken when the rows' ``version`` moved.
    private func withState<T>(_ body: (inout State) -> T) -> T {
        let (result, moved) = state.withLock { s -> (T, Bool) in
            let before = s.version
            let result = body(&s)
            return (result, s.version != before)
        }
        if moved { changes.bump() }
        return result
    }

    /// Wakes every dashboard's push to look now (its session ended, the game changed).
    func nudge() { changes.bump() }

    /// A dashboard is open: keep watching for the next 3 s.
    func dashboardOpen() {
        let now = ContinuousClock.now
        let opened = state.withLock { s -> Bool in
            let opened = s.dashboardsUntil.map({ $0 < now }) ?? true
            if opened { s.watchingSince = now }
            s.dashboardsUntil = now + TeacherCommand.watchLifetime
            return opened
        }
        if opened { runner.mailbox.post(.dashboardOpened) }
    }

    /// Since when the robots have been watched without a break: a robot silent since before
    /// then was simply not asked, and is not OFFLINE until it has had time to answer.
    var watchingSince: ContinuousClock.Instant? { state.withLock { $0.watchingSince } }

    /// Any thread; the command leaves at once (beyond 256 waiting, the oldest are dropped).
    func enqueue(_ command: Command, robot: String) {
        runner.mailbox.post(.command(robot: robot, command))
    }

    /// Any thread: the dashboard's Stop all, to every robot of the session on the links at once
    /// (``TeacherBroadcast``); give each row its own stop too (``enqueue(_:robot:)``), after this.
    func stopEveryone() {
        runner.mailbox.post(.stopEveryone)
    }

    /// The teacher dismisses a row: hidden until its robot answers again; a robot DNS-SD no
    /// longer lists is forgotten (and no longer asked).
    func dismiss(robot: String) {
        let listed = hub.robots.contains { $0.id == robot }
        withState { s in
            guard s.rows[robot] != nil || listed else { return }
            if listed {
                s.dismissed[robot] = .now
            } else {
                s.rows[robot] = nil
                s.dismissed[robot] = nil
            }
            s.version += 1
        }
        events.record(robot: robot, event: "teacher-dismiss", detail: "")
    }

    /// The hub's robots, then those it no longer lists that answered during the lesson
    /// (``Row/gone``), without the dismissed ones, with each robot's age ("last heard").
    func rows() -> [Row] {
        let robots = hub.robots
        return withState { s in
            var out: [Row] = []
            for r in robots {
                var row = s.rows[r.id] ?? Row(id: r.id, label: r.name, off: Self.notReached)
                row.label = r.name
                row.address = "\(r.peer.address)"
                s.rows[r.id]?.label = r.name
                if let at = s.dismissed[r.id] {
                    guard let heard = row.heard, heard > at else { continue }
                    s.dismissed[r.id] = nil
                }
                out.append(row)
            }
            let listed = Set(robots.map(\.id))
            for (id, row) in s.rows where !listed.contains(id) && row.heard != nil && s.dismissed[id] == nil {
                var row = row
                row.gone = true
                out.append(row)
            }
            return out
        }
    }

    /// The robots to keep a socket for beside the hub's: those kept as ``Row/gone``.
    private func keptRobots(besides listed: Set<String>) -> [String: SocketAddress] {
        withState { s in
            var kept: [String: SocketAddress] = [:]
            for (id, row) in s.rows where !listed.contains(id) && row.heard != nil && s.dismissed[id] == nil {
                if let address = row.reachedAt { kept[id] = address }
            }
            return kept
        }
    }

    var version: Int { state.withLock { $0.version } }

    /// Watch reports dropped as forged or stale so far (shown on the dashboard).
    var droppedReports: Int { state.withLock { $0.dropped } }

    /// Roster students not yet seen driving their robot this lesson (empty without a roster).
    func missing() -> [String] {
        guard let roster else { return [] }
        let arrived = state.withLock { $0.arrived }
        return roster.entries.map(\.student).filter { !arrived.contains($0) }
    }

    func start() {
        thread.start { [self] in run() }
    }

    func stop() {
        runner.requestStop()
        thread.wait(timeout: .seconds(2))
    }

    /// Who a robot is, as a message signed with the teacher key said.
    private struct Identity {
        var name: String
        var robotID: RobotID?
        /// What every signed command to it names: `id:` and its robot id (a clone with the same
        /// display name refuses it, Protocol.md §7.6.1), else its signed display name; never
        /// empty (which would be every receiver of the session).
        var target: String? { robotID?.target ?? (name.isEmpty ? nil : name) }
    }

    private struct Link {
        var socket: UDPSocket
        var address: SocketAddress
        /// nil until a reply or report signed with the teacher key names the robot.
        var proven: Identity?
        /// Its queries, watches and commands: built, signed, aimed and repeated as `stop-all`'s
        /// are. A reply to a nonce it does not remember is not ours.
        var delivery: TeacherDelivery<SocketAddress>
        /// The next `query` (while the robot is unproven or silent).
        var nextQuery = ContinuousClock.now
        /// A signed report was last taken then (a robot silent for a while is asked again who it
        /// is: it may have restarted with another id).
        var lastReport: ContinuousClock.Instant?
        /// Just proven: watch it now rather than at the next tick.
        var watchNow = false
        /// The nonces of the watches sent to this robot that its reports may be signed for.
        var gate = WatchReportGate()
    }

    /// What the teacher asked by a command (nil: a query or a watch, asked by no one): a signed
    /// reply changes the row by it at once.
    static func asked(_ command: TeacherDelivery<SocketAddress>.Command?) -> Command? {
        switch command {
        case .stop: .stop
        case .release: .release
        case .teacher(.identify, _): .identify
        case .teacher(.kick, let why): .kick(why)
        case .teacher(.lock, let name): .lock(name)
        case .teacher(.unlock, _): .unlock
        case .teacher(.watch, _), .query, nil: nil
        }
    }

    /// The command the teacher's button sends, and how many times at most: a stop-all up to 10
    /// times 50 ms apart until a reply, as `stop-all` sends it; a teacher command three times
    /// (a repeat's nonce is refused as used, so a lost reply costs nothing).
    static func delivered(_ command: Command) -> (command: TeacherDelivery<SocketAddress>.Command, times: Int) {
        switch command {
        case .stop: (.stop, 10)
        case .release: (.release, 10)
        case .identify: (.teacher(.identify, argument: ""), 3)
        case .kick(let why): (.teacher(.kick, argument: why), 3)
        case .lock(let name): (.teacher(.lock, argument: name), 3)
        case .unlock: (.teacher(.unlock, argument: ""), 3)
        }
    }

    private func run() {
        var links: [String: Link] = [:]
        var order: [String] = []
        var nextRefresh = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 2048)
        var nextWatch = ContinuousClock.now
        let delivery = TeacherDelivery<SocketAddress>(settings: .init(session: session, macKey: key,
                                                                      connection: UInt32.random(in: 1...UInt32.max)))
        var told: [String] = []
        var queue: [(robot: String, command: Command)] = []
        var broadcast = TeacherBroadcast(session: session, macKey: key)
        defer { broadcast.close() }
        // The clock as the runner read it when the last wait ended: one reading a turn.
        var now = ContinuousClock.now
        while true {
            if let onProven {
                let proven = links.values.compactMap { l in l.proven.map { (address: l.address, robot: $0.robotID) } }
                    .sorted { "\($0.address)" < "\($1.address)" }
                let now = proven.map { "\($0.address) \($0.robot?.text ?? "-")" }
                if now != told { told = now; onProven(proven) }
            }
            let watching = state.withLock { s in (s.dashboardsUntil ?? now) > now }
            // One socket per robot of the hub (robots come and go with --session), looked at
            // with the watch (once a second) or when a command is queued.
            if links.isEmpty || now >= nextRefresh || !queue.isEmpty {
                nextRefresh = now + .seconds(1)
                let robots = hub.robots
                for r in robots where links[r.id]?.address != r.peer.address {
                    links[r.id]?.socket.close()
                    links[r.id] = nil
                    if let s = try? UDPSocket.sender(for: r.peer.address) { links[r.id] = Link(socket: s, address: r.peer.address, delivery: delivery) }
                    // Another robot (or none yet) at that place: nothing it said before counts.
                    withState { s in
                        var row = Row(id: r.id, label: r.name, address: "\(r.peer.address)", off: Self.notReached)
                        row.stop = nil
                        s.rows[r.id] = row
                        s.version += 1
                    }
                }
                let listed = Set(robots.map(\.id))
                let kept = keptRobots(besides: listed)
                for (id, address) in kept where links[id] == nil {
                    if let s = try? UDPSocket.sender(for: address) { links[id] = Link(socket: s, address: address, delivery: delivery) }
                }
                for id in links.keys where !listed.contains(id) && kept[id] == nil { links[id]?.socket.close(); links[id] = nil }
                order = Array(links.keys)
            }

            // Who is it? An unsigned query (it changes nothing on any receiver, so a socket that
            // forwards it gains nothing) to each robot not yet proven (once a second), or proven
            // but silent for 3 s (every 3 s: it may have restarted with another id).
            if watching || !queue.isEmpty {
                for id in links.keys where now >= links[id]!.nextQuery
                    && (links[id]!.proven == nil || (links[id]!.lastReport.map { now - $0 > .seconds(3) } ?? true)) {
                    links[id]!.nextQuery = now + (links[id]!.proven == nil ? .seconds(1) : .seconds(3))
                    send(.query, target: "", times: 1, on: &links[id]!, now: now)
                }
            }
            let tick = now >= nextWatch
            if watching {
                if tick { nextWatch = now + .seconds(1) }
                for id in links.keys where tick || links[id]!.watchNow {
                    links[id]!.watchNow = false
                    // Only a robot that proved the key is watched, and only under its own name.
                    guard let target = links[id]!.proven?.target else { continue }
                    send(.teacher(.watch, argument: ""), target: target, times: 1, on: &links[id]!, now: now)
                }
            }
            for (robot, command) in queue {
                guard links[robot] != nil else { continue }
                // A command names its receiver (so a captured one is refused by every other), as
                // a signed reply named it: a robot that has not proven the key gets none.
                let keyless = state.withLock { s in s.rows[robot]?.keyless ?? false }
                if links[robot]!.proven == nil, keyless, case .stop = command {
                    // No name to aim at: a stop for the whole session, to the address it answered
                    // from only. Wherever it ends up, it can only stop a robot.
                    markSent("stop", robot: robot)
                    send(.stop, target: "", times: Self.delivered(.stop).times, on: &links[robot]!, now: now)
                    continue
                }
                guard let target = links[robot]!.proven?.target else {
                    let why = state.withLock { s in s.rows[robot]?.off ?? Self.notReached }
                    events.record(robot: links[robot]!.proven?.name ?? "\(links[robot]!.address)", event: "not-sent",
                                  detail: "\(Self.commandName(command)): \(why)")
                    continue
                }
                if case .stop = command { markSent("stop", robot: robot) }
                if case .release = command { markSent("release", robot: robot) }
                let (message, times) = Self.delivered(command)
                send(message, target: target, times: times, on: &links[robot]!, now: now)
            }
            // What is due: everything queued above, and the repeats.
            for id in links.keys {
                let link = links[id]!
                for (datagram, address) in links[id]!.delivery.due(now: now) { _ = try? link.socket.send(datagram, to: address) }
            }
            queue.removeAll()
            // Wait for replies, a command, or what is due next: a repeat; while watching, the
            // next watch and each unproven robot's next query (a proven one is asked again, if
            // silent, at a watch). Nothing is due with no dashboard open and nothing to repeat.
            var due = links.values.compactMap(\.delivery.nextDeadline) + [broadcast.nextDeadline].compactMap { $0 }
            if watching {
                due.append(nextWatch)
                due += links.values.filter { $0.proven == nil }.map(\.nextQuery)
            }
            let fds = order.map { (fd: links[$0]!.socket.descriptor.rawValue, events: Poller.Events.readable) }
            guard let wake = try? runner.wait(fds, untilInstant: due.min()), wake.stop == nil else { return }
            now = wake.now.instant
            for event in wake.events {
                switch event {
                case .command(let robot, let command): queue.append((robot, command))
                case .stopEveryone: broadcast.stop(now: now)
                case .dashboardOpened: break
                }
            }
            // The broadcast stop first, before this turn's lookups and rows.
            broadcast.flush(now: now)
            let ready = wake.ready
            for (i, id) in order.enumerated() where i < ready.count && !ready[i].isEmpty {
                while let (length, from) = try? links[id]!.socket.receive(into: &buffer) {
                    guard length <= buffer.count, let d = try? ControlDatagram.decode(Array(buffer[..<length])) else { continue }
                    if d.header.type == .watchReport {
                        report(d, from: from, robot: id, link: &links[id]!)
                        continue
                    }
                    guard from == links[id]!.address,
                          let message = try? ControlMessage.decode(type: d.header.type, payload: d.payload) else { continue }
                    take(message, robot: id, link: &links[id]!)
                }
            }
        }
    }

    /// A watch report reaches a row only from the robot's address, whole, signed for one of
    /// this link's live watches and newer than the last one taken (Protocol.md §7.12).
    static func commandName(_ command: Command) -> String {
        switch command {
        case .stop: "stop"
        case .release: "release"
        case .identify: "identify"
        case .kick: "kick"
        case .lock: "lock"
        case .unlock: "unlock"
        }
    }

    private func report(_ d: ControlDatagram, from: SocketAddress, robot: String, link: inout Link) {
        let why: String
        if from != link.address {
            why = "from \(from), not the robot's address"
        } else if case .watchReport(let report)? = try? ControlMessage.decode(type: .watchReport, payload: d.payload) {
            switch link.gate.check(payload: d.payload, serial: report.serial, key: key, now: .now) {
            case nil:
                take(.watchReport(report), robot: robot, link: &link)
                return
            case .unverified: why = "its MAC is not right for a live watch of this dashboard (forged, another dashboard's, or stale)"
            case .stale: why = "serial \(report.serial) is not newer than the reports taken (a replay)"
            }
        } else {
            why = "it does not decode (an unsigned report from an older receiver is refused too)"
        }
        let now = ContinuousClock.now
        let log = state.withLock { s -> Int? in
            s.dropped += 1
            if let last = s.droppedLogged, now - last.at < Self.dropLogPeriod { return nil }
            s.droppedLogged = (s.dropped, now)
            return s.dropped
        }
        if let total = log {
            logger.warning("dropped a watch report: \(why); forged or stale reports dropped so far: \(total)",
                           metadata: ["robot": "\(link.proven?.name ?? "\(link.address)")"])
        }
    }

    /// `message` came from the robot's address. Reports reach here only once verified (above).
    private func take(_ message: ControlMessage, robot: String, link: inout Link) {
        let now = ContinuousClock.now
        switch message {
        case .watchReport(let report):
            let id = RobotID(value: report.robotID) ?? link.proven?.robotID
            proven(Identity(name: report.name.text, robotID: id), robot: robot, link: &link)
            link.lastReport = now
            withState { s in
                var row = s.rows[robot] ?? Row(id: robot, label: robot)
                if let old = row.report, old.state != report.state || old.driver != report.driver {
                    events.record(robot: report.name.text, event: "state", detail: "\(Self.stateName(report.state)) driver=\(report.driver)")
                }
                // A change the teacher must see soon (not just fresher figures): pushed within 100 ms.
                if row.report.map({ $0.state != report.state || $0.driver != report.driver || $0.flags != report.flags }) ?? true {
                    s.version += 1
                }
                row.report = report
                row.name = report.name.text
                row.heard = now
                row.reachedAt = link.address
                if let roster, roster.students(of: report.name.text).contains(report.driver.text) { s.arrived.insert(report.driver.text) }
                row.refusal = nil
                s.rows[robot] = row
            }
            reportTaken.withLock { $0 }?(report, now)
        case .teacherReply(let reply):
            // Counted only when signed with our key and answering a command we sent (Protocol.md
            // §7.11): a forged reply cannot show a command as done, and only a signed one names
            // the robot. Anything else answering our nonce is shown as unverified, nothing more.
            guard let sent = link.delivery.command(reply.nonce, to: link.address) else { return }
            guard reply.verify(key: key) else {
                unverified(name: reply.displayName.text, signed: !reply.mac.isEmpty, text: reply.text.text, robot: robot, link: link)
                return
            }
            link.delivery.answered(reply.nonce, from: link.address)
            proven(Identity(name: reply.displayName.text, robotID: link.proven?.robotID), robot: robot, link: &link)
            guard reply.outcome == .refused else {
                if reply.action != .watch { events.record(robot: reply.displayName.text, event: reply.action.name, detail: "done") }
                if let command = Self.asked(sent) { changeRow(robot, by: command) }
                return
            }
            // A repeat of a command already taken is refused as a replay: not news.
            if reply.text.text.contains("already used") { return }
            withState { s in
                var row = s.rows[robot] ?? Row(id: robot, label: robot)
                row.refusal = reply.text
                row.heard = now
                row.reachedAt = link.address
                s.rows[robot] = row
                s.version += 1
            }
        case .stopAllReply(let reply):
            // As for teacher replies: `stopped` or `released` only when signed with our key (§7.6);
            // a signed reply to our query names the robot (and its robot id) for what follows.
            guard let sent = link.delivery.command(reply.nonce, to: link.address) else { return }
            guard reply.verify(key: key) else {
                unverified(name: reply.displayName.text, signed: !reply.mac.isEmpty, text: reply.outcome == .refused ? reply.text.text : "",
                           robot: robot, link: link)
                // A keyless robot's answer to the stop sent to it: shown as an answer, not as proof.
                if link.proven == nil, reply.mac.isEmpty, Self.asked(sent) != nil {
                    link.delivery.answered(reply.nonce, from: link.address)
                    let text = (reply.outcome == .refused ? "refused: \(reply.text.text.prefix(120))" : reply.outcome == .stopped ? "stopped" : "released")
                        + " (unsigned)"
                    events.record(robot: "\(link.address)", event: "stop-all", detail: text)
                    withState { s in
                        var row = s.rows[robot] ?? Row(id: robot, label: robot)
                        if row.stop != text { s.version += 1 }
                        row.stop = text
                        s.rows[robot] = row
                    }
                }
                return
            }
            link.delivery.answered(reply.nonce, from: link.address)
            proven(Identity(name: reply.displayName.text, robotID: reply.robotID ?? link.proven?.robotID), robot: robot, link: &link)
            if sent == .query { return }
            let text: String = switch reply.outcome {
            case .stopped: "stopped"
            case .released: "released"
            case .refused: "refused: \(reply.text)"
            }
            events.record(robot: reply.displayName.text, event: "stop-all", detail: text)
            withState { s in
                var row = s.rows[robot] ?? Row(id: robot, label: robot)
                if row.stop != text { s.version += 1 }
                row.stop = text
                s.rows[robot] = row
            }
            if reply.outcome != .refused, let command = Self.asked(sent) { changeRow(robot, by: command) }
        default:
            break
        }
    }

    /// A message signed with the teacher key named the robot: its row's name, and the target of
    /// what is signed for it from now on. A robot just proven is watched at once.
    private func proven(_ identity: Identity, robot: String, link: inout Link) {
        let first = link.proven == nil
        link.proven = identity
        if first { link.watchNow = true }
        let off: String? = identity.target == nil ? "its buttons are off: the robot signed a reply naming neither a robot id nor a display name" : nil
        withState { s in
            var row = s.rows[robot] ?? Row(id: robot, label: robot)
            if row.name != identity.name || row.off != off || row.unverified != nil || row.keyless { s.version += 1 }
            row.name = identity.name
            row.off = off
            row.unverified = nil
            row.keyless = false
            row.reachedAt = link.address
            s.rows[robot] = row
        }
    }

    /// An answer to one of our nonces that does not verify under the teacher key: shown as what
    /// it is, logged once per change. It names nothing and aims nothing; an unproven robot's
    /// buttons stay off, but Stop if the answer came unsigned (``Row/keyless``). It answered
    /// from the robot's address: the row was heard.
    private func unverified(name: String, signed: Bool, text: String, robot: String, link: Link) {
        let claim = String(DisplayText.sanitised(name).prefix(40))
        let why = text.isEmpty ? "" : ": " + String(DisplayText.sanitised(text).prefix(120))
        let note = "unverified reply from \(link.address) (\(signed ? "signed with another key" : "unsigned: no teacher key"), "
            + "calls itself \"\(claim)\")\(why)"
        let changed = withState { s -> Bool in
            var row = s.rows[robot] ?? Row(id: robot, label: robot)
            row.heard = .now
            row.reachedAt = link.address
            let keyless = link.proven == nil && !signed
            guard row.unverified != note || row.keyless != keyless else { s.rows[robot] = row; return false }
            row.unverified = note
            row.keyless = keyless
            if link.proven == nil { row.off = keyless ? Self.keylessOff : Self.notProven }
            s.rows[robot] = row
            s.version += 1
            return true
        }
        if changed { events.record(robot: "\(link.address)", event: "unverified-reply", detail: note) }
    }

    /// A signed reply says the command was done: the row shows it now, not at the next report.
    private func changeRow(_ robot: String, by command: Command) {
        withState { s in
            guard let report = s.rows[robot]?.report else { return }
            let changed = report.after(command)
            guard changed != report else { return }
            s.rows[robot]?.report = changed
            s.version += 1
        }
    }

    private func markSent(_ action: String, robot: String) {
        withState { s in
            var row = s.rows[robot] ?? Row(id: robot, label: robot)
            row.sent = (action, .now)
            row.stop = nil
            s.rows[robot] = row
            s.version += 1
        }
    }

    /// Queues `command` for the link's robot (it leaves with the turn's other datagrams); a
    /// watch's nonce is one its reports may be signed for.
    private func send(_ command: TeacherDelivery<SocketAddress>.Command, target: String, times: Int, on link: inout Link,
                      now: ContinuousClock.Instant) {
        let nonce = UInt64.random(in: 1...UInt64.max)
        guard link.delivery.send(command, to: link.address, target: target, times: times, nonce: nonce,
                                 wallMillis: WallClock.unixMillis(), now: now) != nil else { return }
        if case .teacher(.watch, _) = command { link.gate.sent(watch: nonce, now: now) }
    }

    /// §7.9's names, as the page's `data-state`.
    static func stateName(_ state: RobotReport.State) -> String { state.name }
}
