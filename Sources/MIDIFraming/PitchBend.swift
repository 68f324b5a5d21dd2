/// The 14-bit pitch-bend value: `En ll mm` carries `mm << 7 | ll`, 0…16383, centre 8192.
///
/// ```
///  E0 00 00  →      0   full down   → −1
///  E0 00 40  →   8192   centre      →  0
///  E0 7F 7F  →  16383   full up     → +1
/// ```
/// The range is lopsided (8192 steps down, 8191 up), so ``normalized(_:)`` divides each side by
/// its own length: both ends are exactly ±1 and the centre exactly 0.
package enum PitchBend {
    package static let centre: UInt16 = 8192
    package static let maximum: UInt16 = 16383

    /// The value of the two data bytes (each masked to 7 bits).
    package static func value(lsb: UInt8, msb: UInt8) -> UInt16 {
        UInt16(msb & 0x7F) << 7 | UInt16(lsb & 0x7F)
    }

    /// The two data bytes (LSB first, as on the wire) of `value` (clamped to 16383).
    package static func bytes(_ value: UInt16) -> (lsb: UInt8, msb: UInt8) {
        let v = min(value, maximum)
        return (UInt8(v & 0x7F), UInt8(v >> 7))
    }

    /// −1…+1: below the centre over 8192 steps, above it over 8191.
    package static func normalized(_ value: UInt16) -> Double {
        let v = Int(min(value, maximum)) - Int(centre)
        return v < 0 ? Double(v) / 8192 : Double(v) / 8191
    }
}
