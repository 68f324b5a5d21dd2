/// Decides whether a receiver obeys a stop-all (Protocol.md §7.6): right session, time within
/// 30 s of ours, not older than the last one obeyed (replay), and with a teacher key set, a
/// valid MAC.
///
/// A guard with no session (`session` empty) takes the stop-all of any session. `receive` always
/// gives its `--session` (default `AnalogRemote`); the empty case is for embedders with no
/// session, which only a teacher who addresses them directly can reach.
public struct StopAllGuard: Sendable {
    public let session: String
    public let teacherKey: [UInt8]?
    public static let clockTolerance: UInt64 = 30_000
    var lastTaken: (millis: UInt64, nonce: UInt64)?
    public private(set) var holding = false

    public init(session: String, teacherKey: String?) {
        self.session = session
        self.teacherKey = teacherKey.map { Array($0.utf8) }
    }

    public enum Verdict: Hashable, Sendable {
        /// Obey: `holding` is now the new value (true = stop).
        case take(stop: Bool)
        /// A repeat of the command last taken: nothing changes.
        case repeated
        case refused(String)
    }

    public mutating func consider(_ s: ControlMessage.StopAll, nowUnixMillis: UInt64) -> Verdict {
        guard session.isEmpty || s.session.utf8.elementsEqual(session.utf8) else { return .refused("stop-all for session \"\(s.session)\", ours is \"\(session)\"") }
        if let key = teacherKey, !s.verify(key: key) {
            return .refused("stop-all with a wrong teacher key (MAC mismatch)")
        }
        let skew = s.unixMillis > nowUnixMillis ? s.unixMillis - nowUnixMillis : nowUnixMillis - s.unixMillis
        guard skew <= Self.clockTolerance else {
            return .refused("stop-all stamped \(skew / 1000) s away from this machine's clock (more than 30 s): check both clocks")
        }
        if let last = lastTaken {
            if last.millis == s.unixMillis && last.nonce == s.nonce { return .repeated }
            guard s.unixMillis >= last.millis else { return .refused("stop-all older than the last one taken (replay)") }
        }
        lastTaken = (s.unixMillis, s.nonce)
        holding = s.action == .stop
        return .take(stop: holding)
    }
}
