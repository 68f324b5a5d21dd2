/// Totals over the receiver's life. They add up:
/// `datagrams = states + bad + control + limited` and `states = applied + held + ignored`.
public struct ReceiverCounters: Sendable, Equatable {
    /// Every datagram read from the socket.
    public var datagrams = 0
    /// Valid 8-byte state packets.
    public var states = 0
    /// 8-byte datagrams the decoder refused (NaN/infinite angle).
    public var bad = 0
    /// Datagrams of any other size: reserved for control messages, counted and dropped.
    public var control = 0
    /// Valid states from a controller that does not own the robot.
    public var ignored = 0
    /// Valid states from the owner held back by the failsafe (not resting).
    public var held = 0
    /// Valid states that went through the mapping.
    public var applied = 0
    /// Value sets handed to the board (changes only), including stops and the rest state.
    public var boardWrites = 0
    /// Times the failsafe tripped while driving.
    public var failsafeTrips = 0
    /// Datagrams dropped undecoded by the per-source rate limit (Protocol.md §7.4).
    public var limited = 0

    public init() {}

    /// The line printed on stdout at exit; tests and scripts parse it (docs/receiver.md, "What the receiver prints").
    public func summary(sources: Int, evicted: Int) -> String {
        "summary packets=\(datagrams) state=\(states) bad=\(bad) ignored=\(ignored) control=\(control)"
            + " held=\(held) applied=\(applied) writes=\(boardWrites) failsafes=\(failsafeTrips)"
            + " sources=\(sources) evicted=\(evicted) limited=\(limited)"
    }
}
