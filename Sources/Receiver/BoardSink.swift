import BoardProtocol
import SystemIO

/// Where the receiver's memory-map values go: the board link, or an in-memory board.
///
/// The two calls are exactly those of BoardLink's `BoardConnection`, so after the merge
/// `extension BoardConnection: BoardSink {}` is the whole adapter (see BoardSinkFactory.swift).
/// Contract the receive loop relies on:
/// - ``setDesired(_:)`` returns at once from the loop's thread; values are per address, the
///   latest value for an address wins, and only changes need to reach the board;
/// - ``writeSafeState(timeout:)`` blocks until the board has confirmed the safe state (motors 0)
///   or `timeout` passes, and says which.
package protocol BoardSink: Sendable {
    func setDesired(_ values: [UInt8: UInt8])
    func writeSafeState(timeout: Duration) -> Bool
    /// Releases the device; called once, after the safe state, at exit.
    func close()
    /// What the start-up probe found and what is driven on it: profile, identity, mapping
    /// (nil: not probed, e.g. an in-memory board; the configuration's mapping is driven).
    var resolution: BoardResolution? { get }
    /// When the thread that lets the board's commands out last went round its loop (nil: the
    /// sink has no such thread). The watchdog keep-alive waits while it is stale.
    var linkBeat: Tick? { get }
    /// The latest sensor block the board link read, with the number of blocks read so far
    /// (nil: none yet, reads off, or a board without sensors).
    var sensors: (block: SensorBlock, serial: UInt64)? { get }
}

extension BoardSink {
    package func close() {}
    package var resolution: BoardResolution? { nil }
    package var linkBeat: Tick? { nil }
    package var sensors: (block: SensorBlock, serial: UInt64)? { nil }
}
