/// Totals over the receiver's life. They add up:
/// `datagrams = states + bad + control + limited` and `states = applied + held + ignored`.
package struct ReceiverCounters: Sendable, Equatable {
    /// Every datagram read from the socket.
    package var datagrams = 0
    /// Valid 8-byte state packets.
    package var states = 0
    /// 8-byte datagrams the decoder refused (NaN/infinite angle).
    package var bad = 0
    /// Datagrams of any other size: reserved for control messages, counted and dropped.
    package var control = 0
    /// Valid states from a controller that does not own the robot.
    package var ignored = 0
    /// Valid states from the owner held back by the failsafe (not resting).
    package var held = 0
    /// Valid states that went through the mapping.
    package var applied = 0
    /// Value sets handed to the board (changes only), including stops and the rest state.
    package var boardWrites = 0
    /// Times the failsafe tripped while driving.
    package var failsafeTrips = 0
    /// Datagrams dropped undecoded by the per-source rate limit (Protocol.md §7.4).
    package var limited = 0

    package init() {}

    /// The line printed on stdout at exit; tests and scripts parse it (docs/receiver.md, "What the receiver prints").
    package func summary(sources: Int, evicted: Int) -> String {
        "summary packets=\(datagrams) state=\(states) bad=\(bad) ignored=\(ignored) control=\(control)"
            + " held=\(held) applied=\(applied) writes=\(boardWrites) failsafes=\(failsafeTrips)"
            + " sources=\(sources) evicted=\(evicted) limited=\(limited)"
    }
}
