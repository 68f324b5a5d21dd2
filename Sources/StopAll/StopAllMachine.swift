import ControlPlane
import ControlWire
import RemoteWire
import SystemIO

/// The teacher's stop (Protocol.md §7.6) as a value: receivers found, datagrams received and the
/// time go in; datagrams to send, lines to print and the end come out. ``StopAllCommand`` owns
/// the sockets, the browse, the signals and the clock, and does what the actions say.
///
/// The stop is the emergency: it goes out signed the moment a receiver is known — aimed at its
/// robot id when that is known (TXT `robot=`), else at the whole session (empty target: a
/// `--peer`, or a receiver that announces no id) — and its reply names the receiver. Nothing is
/// asked first. A release, and any command under `--robot` to a receiver whose id is not known,
/// waits for an unsigned query's answer (its name and robot id) and is then signed for that
/// receiver alone (its target `id:` and its robot id, or its name from a receiver without one):
/// so a captured release is refused by every other robot. The nonce is fresh per receiver.
/// Building, signing, aiming and repeating each datagram is ``TeacherDelivery``'s, the same
/// value the dashboard sends its buttons through.
/// With ``Settings/robots``, only those robots get a command: a receiver whose TXT or reply
/// names another id (or none) is left alone, uncounted. Each datagram goes out up to
/// ``Settings/repeats`` times, ``Settings/spacing`` apart, until the receiver answers.
///
/// Before anything else, a stop goes to every host on the links (``Settings/broadcast``: each
/// interface's IPv4 broadcast address and IPv6 all-nodes, at the default port), signed for the
/// whole session (under ``Settings/robots``, one per robot id): every receiver of the session on
/// the default port takes it before any lookup. A signed `stopped` reply to it (with a teacher
/// key: signed with that key) counts as that receiver's answer; refusals to it (the receivers of
/// other sessions saying so) are not shown. A receiver is counted once however it was reached:
/// the same robot id (or none on both sides) and the same address or display name — not the
/// robot id alone, which robots cloned after their first start share. Not for a release, nor
/// with `--peer` (the receivers are named).
///
/// Receivers known from the last run (``KnownReceivers``: the address and robot id of each one
/// that took it) get the stop at once too, before DNS-SD has listed anything. They count only
/// once they answer or DNS-SD lists them (by robot id, or by address): one that does neither is
/// left out silently (it left the class), and one whose address now answers with a refusal, or
/// that DNS-SD lists as another robot, is dropped for whatever DNS-SD lists there. The run
/// ends when nothing is left to send, no reply is still expected (``Settings/replyGrace`` after
/// the last send) and the browse is over — or on ``Event/interrupted``.
///
/// To extend (a signed reply, a robot id): a new ``Event`` case for what comes in, a new
/// ``Action`` case for what goes out; datagrams come in as bytes, so checking them is in here.
package struct StopAllMachine<Random: RandomNumberGenerator & Sendable>: Sendable {
    package struct Settings: Sendable {
        package var session: String
        package var release: Bool
        package var teacherKey: TeacherKey?
        /// How long receivers may still turn up (the DNS-SD browse); zero when they are all given.
        package var browseFor: Duration
        /// `--robot`: only these robots (empty: every receiver found).
        package var robots: Set<RobotID> = []
        package var repeats = 10
        package var spacing: Duration = .milliseconds(50)
        /// How long to wait for a reply after the last send.
        package var replyGrace: Duration = .milliseconds(300)
        /// Where the broadcast stop goes (``LinkBroadcast/destinations(port:)``); empty: nowhere.
        package var broadcast: [SocketAddress] = []
        /// How often the broadcast stop goes out, ``spacing`` apart: it is never answered by all
        /// (the replies come from each receiver), so it is not repeated until answered.
        package var broadcastRepeats = TeacherDelivery<SocketAddress>.broadcastTimes

        package init(session: String, release: Bool, teacherKey: TeacherKey?, browseFor: Duration) {
            self.session = session
            self.release = release
            self.teacherKey = teacherKey
            self.browseFor = browseFor
        }
    }

    /// A receiver to reach.
    package struct Receiver: Sendable, Equatable {
        /// The name shown (the DNS-SD name), nil for `--peer` (the reply's name is shown).
        package var label: String?
        /// The DNS-SD instance: a receiver is counted once however many addresses it has (nil
        /// for `--peer`, where the address is all there is).
        package var identity: String?
        package var address: SocketAddress
        /// Its robot id from TXT `robot=`, when announced.
        package var robot: RobotID?

        package init(label: String?, identity: String?, address: SocketAddress, robot: RobotID? = nil) {
            self.label = label
            self.identity = identity
            self.address = address
            self.robot = robot
        }
    }

    package enum Event: Sendable {
        /// What one look at the browse found (possibly nothing): new receivers are added, and
        /// the status line says how many there are.
        case browsed([Receiver])
        /// A datagram arrived on one of the sockets.
        case datagram([UInt8], from: SocketAddress)
        /// SIGINT/SIGTERM: stop sending, report what is known.
        case interrupted
    }

    package enum Action: Sendable, Equatable {
        case send([UInt8], to: SocketAddress)
        /// One line on stdout (the status line out of its way).
        case print(String)
        case status(String, force: Bool)
        /// The run is over; every line has been printed.
        case finish(Result)
    }

    package enum Result: Sendable, Equatable {
        case everyReceiverTookIt
        case notEveryReceiverTookIt
        /// Nothing was found to send to.
        case noReceivers
    }

    struct Target: Sendable {
        var receiver: Receiver
        /// The command at once (a stop), or the query first and then (once the receiver named
        /// itself) the command signed for it: its nonce in ``StopAllMachine/delivery``.
        var nonce: UInt64
        var querying: Bool
        var reply: ControlMessage.StopAllReply?
        /// With a teacher key: a reply to the command that claims success but is not signed with
        /// that key (another key, or forged): shown at the end if no signed one came, never counted.
        var unverified: ControlMessage.StopAllReply?
        /// Not one of ``Settings/robots`` (its reply named another id): sent nothing more, not counted.
        var leftAlone = false
        /// From the last run's file (``KnownReceivers``), not from DNS-SD or `--peer`.
        var known = false
        /// Known, and not yet answered nor listed by DNS-SD: not counted.
        var unconfirmed = false
        /// A known receiver whose address is someone else's now, or one heard by broadcast that
        /// answered again under its DNS-SD name: sent nothing more, not counted.
        var superseded = false
        /// Found by its reply to the broadcast stop (not by DNS-SD, `--peer` or the last run).
        var heardByBroadcast = false
    }

    package let settings: Settings
    private var delivery: TeacherDelivery<SocketAddress>
    private var random: Random
    private(set) var targets: [Target] = []
    /// The broadcast stops' nonces (one per target: the session, or each `--robot` id).
    private var broadcastNonces: Set<UInt64> = []
    private let browseEnd: ContinuousClock.Instant
    private var lastSendAt: ContinuousClock.Instant
    private var lastTick: ContinuousClock.Instant
    package private(set) var isFinished = false

    /// `peers`: the receivers given on the command line (reached at once); with none, the run
    /// browses for ``Settings/browseFor``. `known`: the receivers that took the last run
    /// (reached at once, counted only once confirmed; see the type's comment).
    package init(settings: Settings, peers: [SocketAddress], known: [KnownReceivers.Entry] = [], now: ContinuousClock.Instant,
                 wallMillis: UInt64, random: Random) {
        self.settings = settings
        self.random = random
        var deliverySettings = TeacherDelivery<SocketAddress>.Settings(session: settings.session, macKey: settings.teacherKey?.macKey,
                                                                        connection: UInt32.random(in: 1...UInt32.max, using: &self.random))
        deliverySettings.spacing = settings.spacing
        delivery = TeacherDelivery(settings: deliverySettings)
        browseEnd = peers.isEmpty ? now + settings.browseFor : now
        lastSendAt = now
        lastTick = now
        if peers.isEmpty, !settings.release, !settings.broadcast.isEmpty {
            let aims = settings.robots.isEmpty ? [""] : settings.robots.sorted { $0.value < $1.value }.map(\.target)
            for target in aims {
                let nonce = self.random.next() as UInt64
                broadcastNonces.insert(nonce)
                for address in settings.broadcast {
                    delivery.send(.stop, to: address, target: target, times: settings.broadcastRepeats, nonce: nonce,
                                  wallMillis: wallMillis, now: now)
                }
            }
        }
        for address in peers {
            add(Receiver(label: nil, identity: nil, address: address), now: now, wallMillis: wallMillis)
        }
        for entry in known where !targets.contains(where: { $0.receiver.address == entry.address }) {
            if !settings.robots.isEmpty, !(entry.robot.map { settings.robots.contains($0) } ?? false) { continue }
            add(Receiver(label: nil, identity: nil, address: entry.address, robot: entry.robot), now: now, wallMillis: wallMillis)
            targets[targets.count - 1].known = true
            targets[targets.count - 1].unconfirmed = true
        }
    }

    /// What to show before the first tick.
    package var opening: [Action] {
        targets.isEmpty ? [.status("looking for the receivers of session \"\(settings.session)\"…", force: true)] : []
    }

    /// Sends what is due; finishes when nothing more can happen.
    package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard !isFinished else { return [] }
        lastTick = now
        var out: [Action] = []
        for (datagram, address) in delivery.due(now: now) {
            out.append(.send(datagram, to: address))
            lastSendAt = now
        }
        if !isSending && !isWaitingForReplies(now) && now >= browseEnd { out += finish() }
        return out
    }

    /// When ``tick(now:)`` has something to do next; nil once finished.
    package var nextDeadline: ContinuousClock.Instant? {
        guard !isFinished else { return nil }
        var times = delivery.nextDeadline.map { [$0] } ?? []
        if browseEnd > lastTick { times.append(browseEnd) }
        if isWaitingForReplies(lastTick) { times.append(lastSendAt + settings.replyGrace) }
        return times.min()
    }

    package mutating func handle(_ event: Event, now: ContinuousClock.Instant, wallMillis: UInt64) -> [Action] {
        guard !isFinished else { return [] }
        switch event {
        case .interrupted:
            return finish()
        case .browsed(let found):
            for r in found {
                // By identity, not address: a receiver whose AAAA answered after its A is still one receiver.
                guard !targets.contains(where: { $0.receiver.identity == r.identity }) else { continue }
                if let i = targets.firstIndex(where: { $0.heardByBroadcast && $0.receiver.identity == nil && !$0.superseded
                                                        && Self.isListing(r, of: $0) }) {
                    // Took the broadcast stop already: counted once, under its DNS-SD name, sent nothing more.
                    confirm(i, as: r, now: now)
                    continue
                }
                if let i = targets.firstIndex(where: { $0.known && $0.receiver.identity == nil && !$0.superseded
                                                        && ($0.receiver.robot.map { $0 == r.robot } ?? false || $0.receiver.address == r.address) }) {
                    if targets[i].receiver.robot == r.robot || (r.robot != nil && targets[i].reply?.robotID == r.robot) {
                        // The same robot, listed now: counted, under its DNS-SD name, at the address listed.
                        confirm(i, as: r, now: now)
                        continue
                    }
                    // Its address is another robot's now (or the listing names no id): that one is reached as listed.
                    if targets[i].reply == nil { supersede(i) }
                }
                // Its TXT already says it is another robot: not even a query.
                if !settings.robots.isEmpty, let robot = r.robot, !settings.robots.contains(robot) { continue }
                add(r, now: now, wallMillis: wallMillis)
            }
            let n = targets.count
            return [.status("session \"\(settings.session)\": \(n) receiver\(n == 1 ? "" : "s") found", force: false)]
        case .datagram(let bytes, let from):
            guard let d = try? ControlDatagram.decode(bytes), d.header.type == .stopAllReply,
                  case .stopAllReply(let reply)? = try? ControlMessage.decode(type: .stopAllReply, payload: d.payload) else { return [] }
            if broadcastNonces.contains(reply.nonce) { return heardBroadcast(reply, from: from) }
            guard let i = targets.firstIndex(where: { $0.receiver.address == from && $0.nonce == reply.nonce && !$0.superseded }),
                  targets[i].reply == nil else { return [] }
            if targets[i].unconfirmed && reply.outcome == .refused {
                // Not the robot that took the last run (or not in this session now): DNS-SD says who is there.
                supersede(i)
                return []
            }
            // A query's reply only names the receiver (the command is signed anyway); the
            // command's reply says it was taken, and must be signed with our key (Protocol.md §7.6).
            if let key = settings.teacherKey, !targets[i].querying, reply.outcome != .refused, !reply.verify(key: key.macKey) {
                targets[i].unverified = reply
                return []
            }
            if targets[i].querying && reply.outcome != .refused {
                if !settings.robots.isEmpty, !(reply.robotID.map { settings.robots.contains($0) } ?? false) {
                    targets[i].leftAlone = true
                    delivery.cancel(targets[i].nonce, to: from)
                    return []
                }
                command(i, target: reply.robotID?.target ?? reply.displayName.text, now: now, wallMillis: wallMillis)
                return []
            }
            // A refused query (another session, say) is said at once, as a refused command is.
            delivery.answered(reply.nonce, from: from)
            targets[i].reply = reply
            targets[i].unconfirmed = false
            if reply.outcome != .refused,
               let j = targets.indices.first(where: { $0 != i && targets[$0].heardByBroadcast && targets[$0].receiver.identity == nil
                                                      && !targets[$0].superseded && targets[$0].reply?.robotID == reply.robotID
                                                      && targets[$0].reply?.displayName == reply.displayName }) {
                // The same robot, heard by broadcast first at another address: counted once, said once.
                targets[j].superseded = true
                return []
            }
            return [.print(Self.describe(targets[i], reply))]
        }
    }

    /// A reply to the broadcast stop: only a receiver that took it counts (with a teacher key,
    /// signed with it). A refusal is a receiver of another session (or, under `--robot`, another
    /// robot) on the link saying so: not shown, not counted.
    private mutating func heardBroadcast(_ reply: ControlMessage.StopAllReply, from: SocketAddress) -> [Action] {
        guard reply.outcome == .stopped else { return [] }
        if let key = settings.teacherKey, !reply.verify(key: key.macKey) { return [] }
        if !settings.robots.isEmpty, !(reply.robotID.map { settings.robots.contains($0) } ?? false) { return [] }
        let same = targets.indices.filter { !targets[$0].superseded && !targets[$0].leftAlone && Self.isSame(targets[$0], as: reply, from: from) }
        if let answered = same.first(where: { targets[$0].reply != nil }) {
            // Heard already (its other address family, a repeat): any other target it matches
            // is the same receiver, counted there.
            for i in same where i != answered && targets[i].reply == nil {
                delivery.cancel(targets[i].nonce, to: targets[i].receiver.address)
                targets[i].superseded = true
            }
            return []
        }
        if let i = same.first {
            // It holds the robot already: the stop (or query) on its way to it can stop.
            delivery.cancel(targets[i].nonce, to: targets[i].receiver.address)
            targets[i].reply = reply
            targets[i].unconfirmed = false
            return [.print(Self.describe(targets[i], reply))]
        }
        var t = Target(receiver: Receiver(label: nil, identity: nil, address: from, robot: reply.robotID), nonce: reply.nonce, querying: false)
        t.reply = reply
        t.heardByBroadcast = true
        targets.append(t)
        return [.print(Self.describe(t, reply))]
    }

    /// Whether a reply to the broadcast from `from` is target `t`'s receiver: the same robot id
    /// (a target that knows none yet matches any) at the same address, or under the same
    /// display name (its IPv4 and IPv6 answers come from two addresses).
    static func isSame(_ t: Target, as reply: ControlMessage.StopAllReply, from: SocketAddress) -> Bool {
        let robot = t.reply?.robotID ?? t.receiver.robot
        if let robot, robot != reply.robotID { return false }
        if t.receiver.address == from { return true }
        guard let name = t.reply?.displayName.text ?? t.receiver.label else { return false }
        return name == reply.displayName.text
    }

    /// Whether DNS-SD's listing `r` is the receiver heard by broadcast as `t`: its robot id, and
    /// its address or its name.
    static func isListing(_ r: Receiver, of t: Target) -> Bool {
        guard t.receiver.robot == r.robot else { return false }
        return t.receiver.address == r.address || (r.label != nil && t.reply?.displayName.text == r.label)
    }

    private var isSending: Bool { delivery.nextDeadline != nil }

    /// Someone else is at its address now: nothing more to it, not counted.
    private mutating func supersede(_ i: Int) {
        targets[i].superseded = true
        delivery.cancel(targets[i].nonce, to: targets[i].receiver.address)
    }

    /// Replies may still come: a target has not answered, or a broadcast went out (anyone may answer it).
    private func isWaitingForReplies(_ now: ContinuousClock.Instant) -> Bool {
        now < lastSendAt + settings.replyGrace
            && (!broadcastNonces.isEmpty || targets.contains { $0.reply == nil && !$0.leftAlone && !$0.superseded })
    }

    /// A known receiver DNS-SD lists now: it counts, is named as listed, and is reached at the
    /// listed address (from the first send again when that differs and it has not answered).
    private mutating func confirm(_ i: Int, as r: Receiver, now: ContinuousClock.Instant) {
        targets[i].unconfirmed = false
        targets[i].receiver.label = r.label
        targets[i].receiver.identity = r.identity
        if targets[i].reply == nil, targets[i].receiver.address != r.address {
            delivery.move(targets[i].nonce, from: targets[i].receiver.address, to: r.address, now: now)
            targets[i].receiver.address = r.address
        }
    }

    /// The receivers that took this run (with a teacher key: whose reply was signed with it),
    /// for the next run's ``KnownReceivers``.
    package var heard: [KnownReceivers.Entry] {
        targets.compactMap { t in
            guard !t.superseded, !t.leftAlone, let reply = t.reply, reply.outcome != .refused else { return nil }
            return KnownReceivers.Entry(address: t.receiver.address, robot: reply.robotID ?? t.receiver.robot)
        }
    }

    private mutating func add(_ receiver: Receiver, now: ContinuousClock.Instant, wallMillis: UInt64) {
        let nonce = random.next() as UInt64
        delivery.send(.query, to: receiver.address, target: "", times: settings.repeats, nonce: nonce, wallMillis: wallMillis, now: now)
        targets.append(Target(receiver: receiver, nonce: nonce, querying: true))
        if let target = immediateTarget(receiver) {
            command(targets.count - 1, target: target, now: now, wallMillis: wallMillis)
        }
    }

    /// The target of a command sent without asking first, or nil when the receiver must name
    /// itself first: a stop goes at once, to the robot id the receiver announced or else to the
    /// whole session; a release, or a command for `--robot` to a receiver of unknown id, waits.
    func immediateTarget(_ receiver: Receiver) -> String? {
        if let robot = receiver.robot { return robot.target }
        guard !settings.release, settings.robots.isEmpty else { return nil }
        return ""
    }

    /// The receiver named itself: the command signed for it alone, with a fresh nonce. A
    /// release the target rule refuses (a receiver that named nothing) is not sent at all.
    private mutating func command(_ i: Int, target: String, now: ContinuousClock.Instant, wallMillis: UInt64) {
        let nonce = random.next() as UInt64
        let address = targets[i].receiver.address
        delivery.cancel(targets[i].nonce, to: address)
        delivery.send(settings.release ? .release : .stop, to: address, target: target, times: settings.repeats, nonce: nonce,
                      wallMillis: wallMillis, now: now)
        targets[i].querying = false
        targets[i].nonce = nonce
    }

    private mutating func finish() -> [Action] {
        isFinished = true
        var out: [Action] = []
        let targets = self.targets.filter { !$0.leftAlone && !$0.superseded && !$0.unconfirmed }
        if !settings.robots.isEmpty {
            let reached = Set(targets.compactMap { $0.reply?.robotID ?? $0.unverified?.robotID })
            for robot in settings.robots.subtracting(reached).sorted(by: { $0.value < $1.value }) {
                out.append(.print("no receiver with robot id \(robot) answered in session \(JSONText.quote(settings.session))"))
            }
        }
        for t in targets where t.reply == nil {
            if let r = t.unverified {
                out.append(.print("\(Self.describe(t, r)): reply not signed with this teacher key (another key, or forged): not counted"))
                continue
            }
            let sent = delivery.count(t.nonce, to: t.receiver.address)
            out.append(.print("no answer from \(Self.name(t, nil)) (sent \(sent) time\(sent == 1 ? "" : "s"); is it running?)"))
        }
        let took = targets.filter { $0.reply.map { $0.outcome != .refused } ?? false }.count
        out.append(.print("reached \(took) of \(targets.count) receiver\(targets.count == 1 ? "" : "s")"))
        let missing = !settings.robots.isEmpty && took < settings.robots.count
        out.append(.finish(targets.isEmpty ? .noReceivers : took == targets.count && !missing ? .everyReceiverTookIt : .notEveryReceiverTookIt))
        return out
    }

    static func name(_ t: Target, _ reply: ControlMessage.StopAllReply?) -> String {
        let label = t.receiver.label ?? reply?.displayName.text
        return label.map { "\(JSONText.quote($0)) \(t.receiver.address)" } ?? "\(t.receiver.address)"
    }

    static func describe(_ t: Target, _ reply: ControlMessage.StopAllReply) -> String {
        switch reply.outcome {
        case .stopped: "stopped \(name(t, reply))"
        case .released: "released \(name(t, reply))"
        case .refused: "refused by \(name(t, reply)): \(reply.text)"
        }
    }
}
