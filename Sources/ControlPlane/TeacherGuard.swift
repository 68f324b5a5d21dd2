import ControlWire
import RemoteWire

/// Decides whether a receiver obeys a teacher command (Protocol.md §7.10): a teacher key is set
/// (without one a receiver refuses to be watched or commanded, and says so), right session,
/// meant for this receiver, a valid MAC, time within 30 s of ours, a nonce not taken before.
/// Unlike a stop-all, commands need not come in time order: two dashboards may watch at once.
package struct TeacherGuard: Sendable {
    package let session: String
    package let instance: String
    package let robotID: RobotID?
    /// The key bytes exactly as the stop-all guard holds them, so both check the same key.
    package let teacherKey: [UInt8]?
    /// Nonces taken and when (ms since 1970), kept for twice the clock tolerance, at most
    /// ``StopAllGuard/nonceCapacity``.
    var taken: [UInt64: UInt64] = [:]

    package static let noKey = "this receiver has no teacher key: start it with --teacher-key-file FILE to be watched from the dashboard"

    package init(session: String, instance: String, robotID: RobotID? = nil, teacherKey: [UInt8]?) {
        self.session = session
        self.instance = instance
        self.robotID = robotID
        self.teacherKey = teacherKey
    }

    /// nil: obey. Otherwise why not, in one line.
    package mutating func refusal(_ c: TeacherCommand, nowUnixMillis now: UInt64) -> String? {
        guard let key = teacherKey else { return Self.noKey }
        guard session.isEmpty || c.session.text.utf8.elementsEqual(session.utf8) else {
            return "teacher command for session \"\(c.session)\", ours is \"\(session)\""
        }
        if let elsewhere = StopAllGuard.aimedElsewhere(c.target.text, instance: instance, robotID: robotID) {
            return "teacher command for \(elsewhere)"
        }
        guard c.verify(key: key) else { return "teacher command with a wrong teacher key (MAC mismatch)" }
        let skew = c.unixMillis > now ? c.unixMillis - now : now - c.unixMillis
        guard skew <= StopAllGuard.clockTolerance else {
            return "teacher command stamped \(skew / 1000) s away from this machine's clock (more than 30 s): check both clocks"
        }
        guard taken[c.nonce] == nil else { return "teacher command nonce already used (replay)" }
        let horizon = now > 2 * StopAllGuard.clockTolerance ? now - 2 * StopAllGuard.clockTolerance : 0
        if taken.count >= StopAllGuard.nonceCapacity { taken = taken.filter { $0.value >= horizon } }
        if taken.count >= StopAllGuard.nonceCapacity, let oldest = taken.min(by: { $0.value < $1.value }) {
            taken.removeValue(forKey: oldest.key)
        }
        taken[c.nonce] = now
        return nil
    }
}
