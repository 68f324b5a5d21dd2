/// Which envelope counters of one connection and direction were already taken (Protocol.md
/// "Security", the authenticated envelope): the highest counter taken and a 64-bit map of the 64
/// below it, as IPsec's anti-replay window (RFC 4303 §3.4.3). A counter is taken at most once;
/// one more than 63 below the highest is refused as too old.
///
/// Check with ``wouldAccept(_:)`` before the AEAD opens the envelope, and ``take(_:)`` only after
/// it authenticated: a forged counter must not move the window.
package struct ReplayWindow: Hashable, Sendable {
    package static let size: UInt64 = 64
    package private(set) var highest: UInt64 = 0
    /// Bit i set = counter `highest - i` taken (bit 0 is `highest` itself).
    var seen: UInt64 = 0

    package init() {}

    package func wouldAccept(_ counter: UInt64) -> Bool {
        guard counter != 0 else { return false }
        if counter > highest { return true }
        let back = highest - counter
        guard back < Self.size else { return false }
        return seen & (1 << back) == 0
    }

    /// Records `counter` (which must pass ``wouldAccept(_:)``).
    package mutating func take(_ counter: UInt64) {
        guard wouldAccept(counter) else { return }
        if counter > highest {
            let shift = counter - highest
            seen = shift >= Self.size ? 0 : seen << shift
            seen |= 1
            highest = counter
        } else {
            seen |= 1 << (highest - counter)
        }
    }
}
