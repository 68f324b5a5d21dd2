import ControlPlane
import Controller
import Foundation
import Logging
import PhoneLink
import RemoteWire
import Synchronization
import SystemIO

/// The dashboard's UDP side (Protocol.md §7.10–§7.12): while a dashboard is open, a signed
/// `watch` to every robot of the hub once a second; the `watch-report`s, `teacher-reply`s and
/// `stop-all reply`s that come back fill one row per robot; the teacher's buttons become signed
/// stop-alls (aimed at one receiver by its robot id once known, else its name, §7.6.1) and
/// teacher commands. One thread, one socket per robot (so a reply's robot is its socket),
/// polled with a 50 ms timeout and woken at once by a queued command. A row takes only reports
/// signed for one of this link's own live watches of that robot (``WatchReportGate``); the
/// others are counted and dropped. A command's signed reply changes its row at once
/// (``WatchReport/after(_:)``), the next report confirms it.
///
/// A robot that has answered once keeps its row while the lesson runs: when DNS-SD no longer
/// lists it (a killed receiver's responder withdraws its service), the row stays, marked
/// ``Row/gone``, and is still watched at its last address, until it is listed again or the
/// teacher dismisses it (``dismiss(robot:)``). A killed receiver cannot write the safe state:
/// its robot may still be moving.
final class TeacherLink: Sendable {
    struct Row: Sendable {
        var id: String
        var label: String
        /// The receiver's display name, once it has answered.
        var name: String?
        var report: WatchReport?
        var heard: ContinuousClock.Instant?
        /// Why the robot will not be watched (its teacher-reply), or a command's refusal.
        var refusal: String?
        /// The outcome of the last stop-all sent to it.
        var stop: String?
        /// The robot said it has no teacher key (``TeacherGuard/noKey``): it takes a stop-all
        /// (unsigned), not a watch or a teacher command, and its replies cannot be verified.
        var keyless = false
        /// The last stop or release sent to it ("stop", "release") and when: all the dashboard
        /// knows of a keyless robot, with ``stop``.
        var sent: (action: String, at: ContinuousClock.Instant)?
        /// Where it last answered from (a kept row is watched there).
        var address: SocketAddress?
        /// No longer among the hub's robots (DNS-SD removed it) but answered during the lesson:
        /// kept, and watched at its last address, until it is back or dismissed.
        var gone = false
    }

    enum Command: Sendable {
        case stop, release, identify, kick(String), lock(String), unlock
    }

    private struct State: Sendable {
        var rows: [String: Row] = [:]
        var dashboardsUntil: ContinuousClock.Instant?
        /// When the robots began to be watched this time (no dashboard was open before).
        var watchingSince: ContinuousClock.Instant?
        var queue: [(robot: String, command: Command)] = []
        var stopped = false
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
    private let session: String
    private let logger: Logger
    let events: TeacherLog
    let roster: Roster?
    private let done: EventFlag
    /// Raised by ``enqueue(_:robot:)``: a command leaves at once, not at the next poll timeout.
    private let wake: EventFlag

    init(hub: PhoneHub, teacherKey: String, session: String, events: TeacherLog, roster: Roster? = nil, logger: Logger) throws {
        self.hub = hub
        // The same MAC key `stop-all --teacher-key-file` signs with (TeacherKey: a keygen key as
        // it is, a passphrase stretched with scrypt).
        key = try TeacherKey(text: teacherKey).macKey
        self.session = session
        self.events = events
        self.roster = roster
        self.logger = logger
        done = try EventFlag()
        wake = try EventFlag()
    }

    /// A dashboard is open: keep watching for the next 3 s.
    func dashboardOpen() {
        let now = ContinuousClock.now
        state.withLock { s in
            if s.dashboardsUntil.map({ $0 < now }) ?? true { s.watchingSince = now }
            s.dashboardsUntil = now + TeacherCommand.watchLifetime
        }
    }

    /// Since when the robots have been watched without a break: a robot silent since before
    /// then was simply not asked, and is not OFFLINE until it has had time to answer.
    var watchingSince: ContinuousClock.Instant? { state.withLock { $0.watchingSince } }

    func enqueue(_ command: Command, robot: String) {
        state.withLock { if $0.queue.count < 256 { $0.queue.append((robot, command)) } }
        wake.raise()
    }

    /// The teacher dismisses a row: hidden until its robot answers again; a robot DNS-SD no
    /// longer lists is forgotten (and no longer watched).
    func dismiss(robot: String) {
        let listed = hub.robots.contains { $0.id == robot }
        state.withLock { s in
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
        return state.withLock { s in
            var out: [Row] = []
            for r in robots {
                var row = s.rows[r.id] ?? Row(id: r.id, label: r.name)
                row.label = r.name
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
        state.withLock { s in
            var kept: [String: SocketAddress] = [:]
            for (id, row) in s.rows where !listed.contains(id) && row.heard != nil && s.dismissed[id] == nil {
                if let address = row.address { kept[id] = address }
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
        let t = Thread { [self] in run() }
        t.name = "teacher-link"
        t.start()
    }

    func stop() {
        state.withLock { $0.stopped = true }
        _ = try? Poller.wait(for: done.descriptor.rawValue, events: .readable, timeout: .seconds(2))
    }

    private struct Link {
        var socket: UDPSocket
        var address: SocketAddress
        var name: String?
        var pending: [(nonce: UInt64, datagram: [UInt8], left: Int, next: ContinuousClock.Instant)] = []
        /// The nonces of the last commands sent to it: a reply to anything else is not ours.
        var sent: [UInt64] = []
        /// What the teacher asked by each of those nonces (watches are not here): a signed reply
        /// changes the row by it at once.
        var asked: [UInt64: Command] = [:]
        /// `id:` and its robot id (Protocol.md §7.6.1), once a report or a signed reply told it:
        /// commands then name the robot, not its display name, which a clone may share.
        var idTarget: String?
        /// The nonces of the watches sent to this robot that its reports may be signed for.
        var gate = WatchReportGate()
    }

    private func run() {
        defer { done.raise() }
        var links: [String: Link] = [:]
        var order: [String] = []
        var nextRefresh = ContinuousClock.now
        var buffer = [UInt8](repeating: 0, count: 2048)
        var nextWatch = ContinuousClock.now
        let connection = UInt32.random(in: 1...UInt32.max)
        while true {
            let (stopped, watching, queue) = state.withLock { s -> (Bool, Bool, [(robot: String, command: Command)]) in
                defer { s.queue.removeAll() }
                return (s.stopped, (s.dashboardsUntil ?? .now) > .now, s.queue)
            }
            if stopped { return }
            let now = ContinuousClock.now
            // One socket per robot of the hub (robots come and go with --session), looked at
            // with the watch (once a second) or when a command is queued.
            if links.isEmpty || now >= nextRefresh || !queue.isEmpty {
                nextRefresh = now + .seconds(1)
                let robots = hub.robots
                for r in robots where links[r.id]?.address != r.peer.address {
                    links[r.id]?.socket.close()
                    if let s = try? UDPSocket.sender(for: r.peer.address) { links[r.id] = Link(socket: s, address: r.peer.address) }
                }
                let listed = Set(robots.map(\.id))
                let kept = keptRobots(besides: listed)
                for (id, address) in kept where links[id] == nil {
                    if let s = try? UDPSocket.sender(for: address) { links[id] = Link(socket: s, address: address) }
                }
                for id in links.keys where !listed.contains(id) && kept[id] == nil { links[id]?.socket.close(); links[id] = nil }
                order = Array(links.keys)
            }

            if watching, now >= nextWatch {
                nextWatch = now + .seconds(1)
                for id in links.keys {
                    let watch = ControlMessage.teacher(signed(.watch, target: links[id]!.name ?? "", argument: ""))
                    send(watch, on: &links[id]!, connection: connection, repeats: 0)
                }
            }
            for (robot, command) in queue {
                guard links[robot] != nil else { continue }
                // A command names its receiver (so a captured one is refused by every other):
                // before the robot has answered once, its name is unknown.
                guard let target = links[robot]!.idTarget ?? links[robot]!.name else {
                    state.withLock { s in
                        var row = s.rows[robot] ?? Row(id: robot, label: robot)
                        row.refusal = "not reached yet: no answer from this robot so far"
                        s.rows[robot] = row
                    }
                    continue
                }
                if case .stop = command { markSent("stop", robot: robot) }
                if case .release = command { markSent("release", robot: robot) }
                let message: ControlMessage = switch command {
                case .stop: .stopAll(stopAll(.stop, target: target))
                case .release: .stopAll(stopAll(.release, target: target))
                case .identify: .teacher(signed(.identify, target: target, argument: ""))
                case .kick(let why): .teacher(signed(.kick, target: target, argument: why))
                case .lock(let name): .teacher(signed(.lock, target: target, argument: name))
                case .unlock: .teacher(signed(.unlock, target: target, argument: ""))
                }
                // A stop-all is repeated like `stop-all` does (up to 10 × 50 ms, until a reply);
                // a teacher command twice more if unanswered (a repeat's nonce is refused as used).
                var repeats = 2
                if case .stopAll = message { repeats = 9 }
                send(message, on: &links[robot]!, connection: connection, repeats: repeats, command: command)
            }
            // Repeats due.
            for id in links.keys {
                var link = links[id]!
                for i in link.pending.indices where now >= link.pending[i].next {
                    _ = try? link.socket.send(link.pending[i].datagram, to: link.address)
                    link.pending[i].left -= 1
                    link.pending[i].next = now + .milliseconds(50)
                }
                link.pending.removeAll { $0.left <= 0 }
                links[id] = link
            }
            // Wait for replies; read the sockets that have some.
            let fds = order.map { (fd: links[$0]!.socket.descriptor.rawValue, events: Poller.Events.readable) }
                + [(fd: wake.descriptor.rawValue, events: Poller.Events.readable)]
            let ready = (try? Poller.wait(fds, until: .now + .milliseconds(50))) ?? []
            if ready.last.map({ !$0.isEmpty }) ?? false { wake.clear() }
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
                           metadata: ["robot": "\(link.name ?? robot)"])
        }
    }

    private func take(_ message: ControlMessage, robot: String, link: inout Link) {
        let now = ContinuousClock.now
        switch message {
        case .watchReport(let report):
            link.name = report.name
            if let id = RobotID(value: report.robotID) { link.idTarget = id.target }
            state.withLock { s in
                var row = s.rows[robot] ?? Row(id: robot, label: robot)
                if let old = row.report, old.state != report.state || old.driver != report.driver {
                    events.record(robot: report.name, event: "state", detail: "\(Self.stateName(report.state)) driver=\(report.driver)")
                }
                // A change the teacher must see soon (not just fresher figures): pushed within 100 ms.
                if row.report.map({ $0.state != report.state || $0.driver != report.driver || $0.flags != report.flags }) ?? true {
                    s.version += 1
                }
                row.report = report
                row.name = report.name
                row.heard = now
                row.address = link.address
                row.keyless = false
                if let roster, roster.students(of: report.name).contains(report.driver) { s.arrived.insert(report.driver) }
                row.refusal = nil
                s.rows[robot] = row
            }
        case .teacherReply(let reply):
            // Done only when signed with our key and answering a command we sent (Protocol.md
            // §7.11): a forged reply cannot show a command as done. A refusal may come unsigned
            // (a receiver without a key cannot sign), and is shown as one.
            guard link.sent.contains(reply.nonce), reply.outcome == .refused || reply.verify(key: key) else { return }
            link.pending.removeAll { $0.nonce == reply.nonce }
            link.name = reply.displayName
            guard reply.outcome == .refused else {
                if reply.action != .watch { events.record(robot: reply.displayName, event: reply.action.name, detail: "done") }
                if let command = link.asked[reply.nonce] { changeRow(robot, by: command) }
                return
            }
            // A repeat of a command already taken is refused as a replay: not news.
            if reply.text.contains("already used") { return }
            state.withLock { s in
                var row = s.rows[robot] ?? Row(id: robot, label: robot)
                row.refusal = reply.text
                row.name = reply.displayName
                row.heard = now
                row.address = link.address
                if reply.text == TeacherGuard.noKey, !row.keyless {
                    row.keyless = true
                    s.version += 1
                }
                s.rows[robot] = row
            }
        case .stopAllReply(let reply):
            // As for teacher replies: `stopped` or `released` only when signed with our key (§7.6).
            // A robot without a key cannot sign: its answer is shown as an answer, not as proof.
            guard link.sent.contains(reply.nonce) else { return }
            let signed = reply.verify(key: key)
            let keyless = state.withLock { $0.rows[robot]?.keyless ?? false }
            guard reply.outcome == .refused || signed || keyless else { return }
            link.pending.removeAll { $0.nonce == reply.nonce }
            link.name = reply.displayName
            if signed, let id = reply.robotID { link.idTarget = id.target }
            var text: String = switch reply.outcome {
            case .stopped: "stopped"
            case .released: "released"
            case .refused: "refused: \(reply.text)"
            }
            if reply.outcome != .refused, !signed { text += " (unsigned)" }
            events.record(robot: reply.displayName, event: "stop-all", detail: text)
            state.withLock { s in
                var row = s.rows[robot] ?? Row(id: robot, label: robot)
                if row.stop != text { s.version += 1 }
                row.stop = text
                if !signed { row.heard = now }
                s.rows[robot] = row
            }
            if signed, reply.outcome != .refused, let command = link.asked[reply.nonce] { changeRow(robot, by: command) }
        default:
            break
        }
    }

    /// A signed reply says the command was done: the row shows it now, not at the next report.
    private func changeRow(_ robot: String, by command: Command) {
        state.withLock { s in
            guard let report = s.rows[robot]?.report else { return }
            let changed = report.after(command)
            guard changed != report else { return }
            s.rows[robot]?.report = changed
            s.version += 1
        }
    }

    private func markSent(_ action: String, robot: String) {
        state.withLock { s in
            var row = s.rows[robot] ?? Row(id: robot, label: robot)
            row.sent = (action, .now)
            row.stop = nil
            s.rows[robot] = row
            s.version += 1
        }
    }

    private func send(_ message: ControlMessage, on link: inout Link, connection: UInt32, repeats: Int, command: Command? = nil) {
        let datagram = ControlDatagram(header: ControlHeader(type: message.type, connection: connection),
                                       payload: message.encodePayload()[...]).encode()
        _ = try? link.socket.send(datagram, to: link.address)
        let nonce: UInt64? = switch message {
        case .stopAll(let s): s.nonce
        case .teacher(let c): c.nonce
        default: nil
        }
        if case .teacher(let c) = message, c.action == .watch { link.gate.sent(watch: c.nonce, now: .now) }
        if let nonce {
            link.sent.append(nonce)
            if let command { link.asked[nonce] = command }
            if link.sent.count > 32 {
                for old in link.sent.prefix(link.sent.count - 32) { link.asked[old] = nil }
                link.sent.removeFirst(link.sent.count - 32)
            }
        }
        if repeats > 0, let nonce {
            link.pending.append((nonce, datagram, repeats, .now + .milliseconds(50)))
        }
    }

    private func signed(_ action: TeacherCommand.Action, target: String, argument: String) -> TeacherCommand {
        var c = TeacherCommand(action: action, unixMillis: WallClock.unixMillis(), nonce: .random(in: 1...UInt64.max),
                               session: session, target: target, argument: argument)
        c.sign(key: key)
        return c
    }

    private func stopAll(_ action: ControlMessage.StopAll.Action, target: String) -> ControlMessage.StopAll {
        var c = ControlMessage.StopAll(action: action, unixMillis: WallClock.unixMillis(), nonce: .random(in: 1...UInt64.max),
                                       session: session, target: target)
        c.sign(key: key)
        return c
    }

    /// §7.9's names, as the page's `data-state`.
    static func stateName(_ state: RobotReport.State) -> String { state.name }
}
