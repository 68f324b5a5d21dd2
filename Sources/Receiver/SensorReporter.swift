import BoardLink
import BoardProtocol
import ControlWire

/// Which controllers get a `robot-sensors` report (Protocol.md §7.9) and when, as a value type:
/// the receive loop passes the latest block it has and the time, and sends what comes back.
///
/// - A block that differs from the last one sent gets the next sample number and goes to every
///   controller at once; an unchanged one goes again to a controller that has not had one for
///   ``repeatInterval``.
/// - Only blocks read since the board link last came up count: after a disconnection, the
///   block the loop has when it next asks is taken as stale (it may predate the loss), and
///   nothing is sent until a newer one (one read interval at most).
/// - Cost on a loop turn with nothing new: two comparisons.
package struct SensorReporter<Source: Hashable & Sendable>: Sendable {
    /// The longest a controller goes without a report while blocks keep coming (half the
    /// promised second: the loop wakes for an unchanged block only every half second).
    package static var repeatInterval: Duration { .milliseconds(500) }

    private var sample: UInt32 = 0
    private var current: SensorBlock?
    /// Blocks up to this serial may have been read before the link last went down.
    private var staleUpTo: UInt64 = 0
    /// The link went down: the first ``due(latest:sources:now:)`` after it marks what is stale.
    private var markStale = false
    private var lastSent: [Source: (sample: UInt32, at: ContinuousClock.Instant)] = [:]
    private var nextRepeat: ContinuousClock.Instant?

    package init() {}

    /// The board link changed: after a loss, wait for a fresh block.
    package mutating func boardLink(_ event: BoardEvent) {
        switch event {
        case .disconnected, .refused:
            markStale = true
            current = nil
        case .connected, .reconnected:
            break
        }
    }

    /// A controller left: forget it.
    package mutating func left(_ source: Source) { lastSent[source] = nil }

    /// The reports to send now, to `sources` (the controllers that said hello and were
    /// accepted), given the latest block the link read (`latest`, with its serial).
    package mutating func due(latest: (block: SensorBlock, serial: UInt64)?, sources: some Collection<Source>,
                              now: ContinuousClock.Instant) -> [(Source, RobotSensors)] {
        if markStale {
            markStale = false
            staleUpTo = latest?.serial ?? 0
            return []
        }
        guard let latest, latest.serial > staleUpTo else { return [] }
        let changed = latest.block != current
        if !changed, let nextRepeat, now < nextRepeat { return [] }
        if changed {
            current = latest.block
            sample &+= 1
        }
        let report = RobotSensors(sample: sample, block: latest.block)
        var out: [(Source, RobotSensors)] = []
        var earliest: ContinuousClock.Instant?
        for source in sources {
            if let last = lastSent[source], last.sample == sample, now - last.at < Self.repeatInterval {
                earliest = min(earliest ?? last.at, last.at)
                continue
            }
            lastSent[source] = (sample, now)
            out.append((source, report))
            earliest = min(earliest ?? now, now)
        }
        nextRepeat = earliest.map { $0 + Self.repeatInterval }
        return out
    }
}
