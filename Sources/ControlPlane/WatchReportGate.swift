import ControlWire

/// The dashboard's check of the watch reports from one robot (Protocol.md §7.12), as a value
/// with an injected clock: which of its own `watch` nonces are still live, and the highest serial
/// taken under each. A report is taken only when its MAC verifies under one of those nonces and
/// it is newer than every report taken before; anything else is dropped with the reason.
///
/// Bounds: nonces live ``nonceLife`` after they were sent (a watch lasts
/// ``TeacherCommand/watchLifetime`` from when the robot takes it, plus the trip), at most
/// ``maxNonces`` of them (a dashboard renews once a second), so a report costs at most that many
/// HMACs and a forger cannot make the gate grow.
package struct WatchReportGate: Sendable {
    package static var nonceLife: Duration { TeacherCommand.watchLifetime + .seconds(1) }
    package static var maxNonces: Int { 8 }

    package enum Drop: Hashable, Sendable {
        /// No live watch nonce of this dashboard makes the MAC right: forged, made for another
        /// dashboard, signed with another key, or for a watch that has ended.
        case unverified
        /// Genuine, but not newer than what was taken: a replay, or late (a newer watch already
        /// reported; e.g. the robot restarted meanwhile).
        case stale
    }

    struct Watch: Sendable {
        var nonce: UInt64
        var sent: ContinuousClock.Instant
        /// The highest serial taken under this nonce.
        var highest: UInt32?
    }

    /// Oldest first.
    var watches: [Watch] = []

    package init() {}

    /// A `watch` with `nonce` went to this robot.
    package mutating func sent(watch nonce: UInt64, now: ContinuousClock.Instant) {
        forget(now: now)
        if watches.count >= Self.maxNonces { watches.removeFirst(watches.count - Self.maxNonces + 1) }
        watches.append(Watch(nonce: nonce, sent: now))
    }

    /// Takes a report (its payload as it arrived, and its decoded serial) or says why not.
    ///
    /// The serial counts per watcher across renewals (§7.12), so within one run of the robot
    /// a report under a newer nonce always has a higher serial. A robot that restarts counts
    /// from 1 again, under the first nonce it takes after the restart: that is why order is kept
    /// per nonce, and a report under a nonce older than one already reported under is stale.
    package mutating func check(payload: ArraySlice<UInt8>, serial: UInt32, key: [UInt8],
                               now: ContinuousClock.Instant) -> Drop? {
        forget(now: now)
        guard let i = watches.indices.reversed().first(where: {
            WatchReport.verify(payload: payload, key: key, watchNonce: watches[$0].nonce)
        }) else { return .unverified }
        if watches[(i + 1)...].contains(where: { $0.highest != nil }) { return .stale }
        if let highest = watches[i].highest, serial <= highest { return .stale }
        watches[i].highest = serial
        return nil
    }

    mutating func forget(now: ContinuousClock.Instant) {
        watches.removeAll { now - $0.sent > Self.nonceLife }
    }
}
