import ControlWire
import RemoteWire

/// Decides whether a receiver obeys a stop-all (Protocol.md §7.6): right session, meant for this
/// receiver (its target is our display name, or empty for every receiver of the session), time
/// within 30 s of ours, a nonce not taken before (remembered for longer than the time window,
/// so a captured command cannot be replayed to us), not older than the last one obeyed, and
/// with a teacher key set, a valid MAC. A `query` changes nothing and needs none of that.
///
/// A guard with no session (`session` empty) takes the stop-all of any session. `receive` always
/// gives its `--session` (default `AnalogRemote`); the empty case is for embedders with no
/// session, which only a teacher who addresses them directly can reach.
package struct StopAllGuard: Sendable {
    package let session: String
    /// This receiver's display name: a command naming another receiver is refused.
    package let instance: String
    /// This receiver's robot id: a command whose target is `id:` and another id is refused
    /// (Protocol.md §7.6.1), so robots cloned with one display name do not take each other's.
    package let robotID: RobotID?
    package let teacherKey: [UInt8]?
    package static let clockTolerance: UInt64 = 30_000
    /// Nonces taken, with their time: kept while a command could still pass the clock check
    /// (2 × the tolerance), at most ``nonceCapacity`` (the oldest go first).
    var takenNonces: [UInt64: UInt64] = [:]
    package static let nonceCapacity = 4096
    var lastTaken: (millis: UInt64, nonce: UInt64, action: ControlMessage.StopAll.Action)?
    package private(set) var holding = false

    package init(session: String, instance: String = "", robotID: RobotID? = nil, teacherKey: TeacherKey?) {
        self.session = session
        self.instance = instance
        self.robotID = robotID
        self.teacherKey = teacherKey?.macKey
    }

    package enum Verdict: Hashable, Sendable {
        /// Obey: `holding` is now the new value (true = stop).
        case take(stop: Bool)
        /// A repeat of the command last taken: nothing changes.
        case repeated
        /// A query: answer with the name and whether the robot is held; nothing changes.
        case answered
        case refused(String)
    }

    package mutating func consider(_ s: ControlMessage.StopAll, nowUnixMillis: UInt64) -> Verdict {
        guard session.isEmpty || s.session.text.utf8.elementsEqual(session.utf8) else { return .refused("stop-all for session \"\(s.session)\", ours is \"\(session)\"") }
        if s.action == .query { return .answered }
        if let elsewhere = Self.aimedElsewhere(s.target.text, instance: instance, robotID: robotID) {
            return .refused("stop-all for \(elsewhere)")
        }
        if let key = teacherKey, !s.verify(key: key) {
            return .refused("stop-all with a wrong teacher key (MAC mismatch)")
        }
        let skew = s.unixMillis > nowUnixMillis ? s.unixMillis - nowUnixMillis : nowUnixMillis - s.unixMillis
        guard skew <= Self.clockTolerance else {
            return .refused("stop-all stamped \(skew / 1000) s away from this machine's clock (more than 30 s): check both clocks")
        }
        if let last = lastTaken, last.millis == s.unixMillis, last.nonce == s.nonce, last.action == s.action {
            return .repeated   // the sender repeats each command up to 10 times
        }
        if takenNonces[s.nonce] != nil {
            // A stop taken before while the robot is held: the teacher's broadcast and unicast
            // copies interleave (Protocol.md §7.6). Nothing changes, so nothing is refused.
            if s.action == .stop, holding { return .repeated }
            return .refused("stop-all nonce already used (replay)")
        }
        if let last = lastTaken, s.unixMillis < last.millis {
            return .refused("stop-all older than the last one taken (replay)")
        }
        remember(s.nonce, at: nowUnixMillis)
        lastTaken = (s.unixMillis, s.nonce, s.action)
        holding = s.action == .stop
        return .take(stop: holding)
    }

    /// nil when `target` names this receiver (empty: every receiver; `id:` and its robot id;
    /// its display name), else whom it names and who this is: `robot id k3m9x2ab, this is …`.
    /// A target of the id form is never compared with the display name (Protocol.md §7.6.1).
    static func aimedElsewhere(_ target: String, instance: String, robotID: RobotID?) -> String? {
        if let aimed = RobotID(target: target) {
            guard aimed != robotID else { return nil }
            return "robot id \(aimed), this is \(robotID.map { "robot id \($0)" } ?? "a receiver without a robot id") (\"\(instance)\")"
        }
        guard !target.isEmpty, !target.utf8.elementsEqual(instance.utf8) else { return nil }
        return "receiver \"\(target)\", this is \"\(instance)\""
    }

    mutating func remember(_ nonce: UInt64, at now: UInt64) {
        let horizon = now > 2 * Self.clockTolerance ? now - 2 * Self.clockTolerance : 0
        if takenNonces.count >= Self.nonceCapacity {
            takenNonces = takenNonces.filter { $0.value >= horizon }
            while takenNonces.count >= Self.nonceCapacity, let oldest = takenNonces.min(by: { $0.value < $1.value }) {
                takenNonces.removeValue(forKey: oldest.key)
            }
        }
        takenNonces[nonce] = now
    }
}
