import BoardProtocol
import Synchronization

/// The sensor block crossing from the board link's thread to the receive loop: the latest block
/// and how many were read, behind a lock. The link hands over every block it reads
/// (``take(_:)``); the loop is woken only when the block changed or half a second passed since
/// the last wake-up, which is enough for a report on change and one at least every second.
package final class SensorFeed: Sendable {
    private struct State {
        var latest: SensorBlock?
        var serial: UInt64 = 0
        var lastWake: ContinuousClock.Instant?
    }
    private let state = Mutex(State())
    private let wake: @Sendable () -> Void

    /// How often an unchanged block still wakes the loop.
    static let repeatWake: Duration = .milliseconds(500)

    package init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    /// From the link's thread: the block just read.
    package func take(_ block: SensorBlock) {
        let now = ContinuousClock.now
        let wakeNow = state.withLock { s -> Bool in
            let changed = s.latest != block
            s.latest = block
            s.serial &+= 1
            guard changed || s.lastWake.map({ now - $0 >= Self.repeatWake }) ?? true else { return false }
            s.lastWake = now
            return true
        }
        if wakeNow { wake() }
    }

    /// The latest block and its serial (the number of blocks read so far; 0 = none yet).
    package var latest: (block: SensorBlock, serial: UInt64)? {
        state.withLock { s in s.latest.map { ($0, s.serial) } }
    }
}
