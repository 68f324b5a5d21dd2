import RemoteWire
import Synchronization

/// A board that lives in memory: a memory map (36 bytes, the kit's) that ``setDesired(_:)``
/// writes into, for tests and for `--board sim` until the board link is merged.
///
/// With a `trace` it reports the whole map after every change as `map <hex>` — 2 hex digits per
/// byte, 72 for the kit — the same line `analog-remote board-sim --trace` prints, so an
/// end-to-end test reads motors the same way from either.
package final class MemoryBoardSink: BoardSink {
    private struct State {
        var map: [UInt8]
        var calls = 0
        var safeStateWrites = 0
    }

    private let state: Mutex<State>
    /// Written by ``writeSafeState(timeout:)``.
    package let safeState: [UInt8: UInt8]
    private let trace: (@Sendable (String) -> Void)?

    package init(size: Int = KitProfile.size, safeState: [UInt8: UInt8],
                trace: (@Sendable (String) -> Void)? = nil) {
        precondition(size > 0 && size <= 256)
        state = Mutex(State(map: [UInt8](repeating: 0, count: size)))
        self.safeState = safeState
        self.trace = trace
    }

    package func setDesired(_ values: [UInt8: UInt8]) {
        apply(values, safe: false)
    }

    package func writeSafeState(timeout: Duration) -> Bool {
        apply(safeState, safe: true)
        return true
    }

    /// The current memory map.
    package var map: [UInt8] { state.withLock { $0.map } }
    /// How many times ``setDesired(_:)`` was called.
    package var calls: Int { state.withLock { $0.calls } }
    package var safeStateWrites: Int { state.withLock { $0.safeStateWrites } }

    /// The map as a trace line: `map 0101…`.
    package static func traceLine(_ map: [UInt8]) -> String { "map " + Hex.string(map) }

    private func apply(_ values: [UInt8: UInt8], safe: Bool) {
        let line: String? = state.withLock { s in
            if safe { s.safeStateWrites += 1 } else { s.calls += 1 }
            var changed = false
            for (address, value) in values where Int(address) < s.map.count && s.map[Int(address)] != value {
                s.map[Int(address)] = value
                changed = true
            }
            // The safe state is always reported, so a trace shows that it was written.
            return changed || safe ? Self.traceLine(s.map) : nil
        }
        if let line, let trace { trace(line) }
    }
}
