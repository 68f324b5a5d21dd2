/// The controller's view of its link: round-trip time from ping/pong and the loss rate
/// (pings that never got a pong), over the last ``window`` pings.
package struct LinkQuality: Sendable {
    package let window: Int
    package let timeout: Duration
    var outstanding: [UInt32: ContinuousClock.Instant] = [:]
    var outcomes: [Bool] = []
    package private(set) var lastRoundTrip: Duration?
    package private(set) var nextID: UInt32 = 1

    package init(window: Int = 20, timeout: Duration = .seconds(2)) {
        self.window = window
        self.timeout = timeout
    }

    /// Registers a ping being sent now; returns its id.
    package mutating func pingSent(now: ContinuousClock.Instant) -> UInt32 {
        expire(now: now)
        let id = nextID
        nextID = nextID == .max ? 1 : nextID + 1
        outstanding[id] = now
        return id
    }

    package mutating func pongReceived(id: UInt32, now: ContinuousClock.Instant) {
        guard let sent = outstanding.removeValue(forKey: id) else { return }
        lastRoundTrip = now - sent
        record(true)
    }

    mutating func expire(now: ContinuousClock.Instant) {
        for (id, sent) in outstanding where now - sent > timeout {
            outstanding.removeValue(forKey: id)
            record(false)
        }
    }

    mutating func record(_ ok: Bool) {
        outcomes.append(ok)
        if outcomes.count > window { outcomes.removeFirst(outcomes.count - window) }
    }

    /// Fraction of the recent pings lost, 0…1; nil before any ping has resolved.
    package var lossRate: Double? {
        outcomes.isEmpty ? nil : Double(outcomes.filter { !$0 }.count) / Double(outcomes.count)
    }
}
