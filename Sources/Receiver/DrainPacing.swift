import SystemIO

/// When the receive loop may read its socket again: at once, unless many datagrams are arriving
/// (a classroom in `--accept any`, a game, the bench's 64 and 256 × 100 Hz), and then after a
/// pause that grows with the rate. Each wake-up of the receive thread costs as much CPU as
/// handling a few datagrams (BENCHMARKS.md, issues 16 and 30): at 6,400 datagrams/s, one
/// `recvmmsg` per millisecond reads about six of them for the price of one wake-up. (Issue 30
/// measured 64 × 100 Hz unpaced after cutting a wake-up's own work by half: 2.5× the CPU of
/// pacing it, well over the 5 % goal, for marks read ~500 µs sooner; so 64 stay paced.)
///
/// The rule (Protocol.md §3.1), with `rate` the datagrams/s of the last `window`:
///
///     pause(rate) = 0                                  below busyRate
///                 = maxPause × (rate − busyRate) / busyRate   up to 2 × busyRate
///                 = maxPause                           from 2 × busyRate on
///
/// so the pause does not jump from nothing to `maxPause` when a class crosses `busyRate`, and
/// the socket is read at most about 1.4 × `busyRate` times a second at any rate (the most just
/// above `busyRate`, where the pause is still short).
///
/// Contracts:
/// - A quiet link is never delayed: below `busyRate` datagrams/s (one driver sends 50–100)
///   every datagram is read as soon as it arrives.
/// - A drain that came back with a full batch or more is never followed by a pause (a flood
///   must not sit in the kernel's queue, where it would push the owner's datagrams out).
/// - The delay added to any datagram is below `maxPause`.
///
/// A value with an injected clock: the loop passes `now`.
struct DrainPacing {
    /// The longest pause (from `2 × busyRate` datagrams/s on).
    var maxPause: Duration
    /// Datagrams per second (measured over `window`) from which drains are paced.
    var busyRate: Double
    var window: Duration = .milliseconds(100) { didSet { windowNanoseconds = Tick.nanoseconds(window) } }
    private var windowNanoseconds: Int64 = 100_000_000
    /// A drain of at least this many datagrams is followed by another at once.
    var fullDrain: Int = DatagramDrain.batchSize

    // Time in ``Tick``s: this runs on every wake-up of the receive loop.
    private var windowStart: Tick?
    private var inWindow = 0
    /// The pause in force, set when a window ends (zero: not paced).
    private(set) var pause: Duration = .zero { didSet { pauseNanoseconds = Tick.nanoseconds(pause) } }
    private var pauseNanoseconds: Int64 = 0
    private var lastDrain: (at: Tick, count: Int)?

    static let defaultBusyRate: Double = 2_000

    init(maxPause: Duration = .milliseconds(1), busyRate: Double = DrainPacing.defaultBusyRate) {
        self.maxPause = maxPause
        self.busyRate = busyRate
    }

    /// The pause for `rate` datagrams/s (the rule above).
    func pause(forRate rate: Double) -> Duration {
        guard maxPause > .zero, busyRate > 0, rate > busyRate else { return .zero }
        let fraction = min(1, (rate - busyRate) / busyRate)
        let (seconds, atto) = maxPause.components
        let nanoseconds = Double(seconds) * 1e9 + Double(atto / 1_000_000_000)
        return .nanoseconds(Int64((nanoseconds * fraction).rounded()))
    }

    /// The socket was drained at `now` and gave `count` datagrams.
    mutating func drained(_ count: Int, at now: Tick) {
        lastDrain = (now, count)
        let start = windowStart ?? now
        if now - start >= windowNanoseconds {
            // The rate of the window that just ended decides the next one.
            let seconds = Tick.seconds(now - start)
            let next = pause(forRate: Double(inWindow) / seconds)
            if next != pause { pause = next }
            windowStart = now
            inWindow = count
        } else {
            windowStart = start
            inWindow += count
        }
    }

    /// Until when the loop should leave the socket unread; nil = read it whenever it is readable.
    func holdUntil(now: Tick) -> Tick? {
        guard pauseNanoseconds > 0, let last = lastDrain, last.count < fullDrain else { return nil }
        let until = last.at + pauseNanoseconds
        return until > now ? until : nil
    }

    mutating func drained(_ count: Int, at now: ContinuousClock.Instant) { drained(count, at: Tick(now)) }

    func holdUntil(now: ContinuousClock.Instant) -> ContinuousClock.Instant? { holdUntil(now: Tick(now))?.instant }

    /// Whether drains are being paced (tests read it).
    var isPacing: Bool { pause > .zero }
}
