/// When the receive loop may read its socket again: at once, unless many datagrams are arriving
/// (a classroom in `--accept any`, a game, the bench's 64 × 100 Hz), and then at most once per
/// `pause`. Each wake-up of the receive thread costs about as much CPU as handling a few
/// datagrams (BENCHMARKS.md, issue 16): at 6,400 datagrams/s, one `recvmmsg` per millisecond
/// reads about six of them for the price of one wake-up.
///
/// Contracts:
/// - A quiet link is never delayed: below `busyRate` datagrams/s (one driver sends 50–100)
///   every datagram is read as soon as it arrives.
/// - A drain that came back with a full batch or more is never followed by a pause (a flood
///   must not sit in the kernel's queue, where it would push the owner's datagrams out).
/// - The delay added to any datagram is below `pause`.
///
/// A value with an injected clock: the loop passes `now`.
struct DrainPacing {
    var pause: Duration
    /// Datagrams per second (measured over `window`) from which drains are paced.
    var busyRate: Double
    var window: Duration = .milliseconds(100)
    /// A drain of at least this many datagrams is followed by another at once.
    var fullDrain: Int = DatagramDrain.batchSize

    private var windowStart: ContinuousClock.Instant?
    private var inWindow = 0
    private var busy = false
    private var lastDrain: (at: ContinuousClock.Instant, count: Int)?

    init(pause: Duration = .milliseconds(1), busyRate: Double = 2_000) {
        self.pause = pause
        self.busyRate = busyRate
    }

    /// The socket was drained at `now` and gave `count` datagrams.
    mutating func drained(_ count: Int, at now: ContinuousClock.Instant) {
        lastDrain = (now, count)
        let start = windowStart ?? now
        if now - start >= window {
            // The rate of the window that just ended decides the next one.
            let seconds = Double((now - start).components.attoseconds) / 1e18 + Double((now - start).components.seconds)
            busy = Double(inWindow) / seconds >= busyRate
            windowStart = now
            inWindow = count
        } else {
            windowStart = start
            inWindow += count
        }
    }

    /// Until when the loop should leave the socket unread; nil = read it whenever it is readable.
    func holdUntil(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard busy, pause > .zero, let last = lastDrain, last.count < fullDrain else { return nil }
        let until = last.at + pause
        return until > now ? until : nil
    }

    /// Whether drains are being paced (tests read it).
    var isPacing: Bool { busy && pause > .zero }
}
