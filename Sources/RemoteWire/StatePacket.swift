/// The 8-byte state packet: the whole wire format between a controller and a receiver.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |        angle: IEEE-754 binary32, radians, big-endian          |  bytes 0–3
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |        buttons: UInt32 big-endian, bit 0 = forward            |  bytes 4–7
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Decoding contract (Protocol.md §2 is normative; `vectors/state-packet.json` holds the vectors):
/// - any length other than 8 is rejected (``StatePacketError/Reason/wrongLength``);
/// - a NaN or ±infinity angle is rejected (``StatePacketError/Reason/angleNotFinite``);
/// - a finite angle beyond ±π/2 is clamped to ±``ControllerState/maxAngle`` (sign kept);
/// - reserved button bits (15–31) are cleared.
/// Encoding writes exactly what it is given (no clamping), so a test can produce any packet.
public enum StatePacket {
    public static let size = 8

    public static func encode(_ state: ControllerState) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        encode(state, into: &bytes)
        return bytes
    }

    /// Writes the 8 bytes into `bytes[0..<8]`, for senders that reuse one buffer.
    public static func encode(_ state: ControllerState, into bytes: inout [UInt8]) {
        precondition(bytes.count >= size, "StatePacket.encode needs an 8-byte buffer")
        let angle = state.angle.bitPattern
        let buttons = state.buttons.rawValue
        for i in 0..<4 {
            let shift = UInt32(24 - 8 * i)
            bytes[i] = UInt8(truncatingIfNeeded: angle >> shift)
            bytes[4 + i] = UInt8(truncatingIfNeeded: buttons >> shift)
        }
    }

    /// Inlinable so callers in other modules get a copy specialised for their collection type:
    /// unspecialised, every byte access goes through witness tables (≈3,700 instructions per
    /// packet in the receiver, measured with callgrind; see BENCHMARKS.md).
    @inlinable
    public static func decode(_ bytes: some Collection<UInt8>) throws(StatePacketError) -> ControllerState {
        guard bytes.count == size else {
            throw StatePacketError(.wrongLength, bytes: Array(bytes))
        }
        var angleBits: UInt32 = 0
        var buttonBits: UInt32 = 0
        var index = bytes.startIndex
        for i in 0..<size {
            let shifted = UInt32(bytes[index])
            if i < 4 { angleBits = angleBits << 8 | shifted } else { buttonBits = buttonBits << 8 | shifted }
            index = bytes.index(after: index)
        }
        var angle = Float(bitPattern: angleBits)
        guard angle.isFinite else {
            throw StatePacketError(.angleNotFinite, bytes: Array(bytes))
        }
        if angle.magnitude > ControllerState.maxAngle {
            angle = ControllerState.maxAngle * (angle.sign == .minus ? -1 : 1)
        }
        return ControllerState(angle: angle, buttons: Buttons(rawValue: buttonBits).intersection(.defined))
    }
}

/// Why a datagram is not a state packet, with the bytes that were refused.
public struct StatePacketError: Error, Hashable, Sendable {
    public enum Reason: String, Hashable, Sendable {
        /// The datagram is not exactly 8 bytes long.
        case wrongLength
        /// Bytes 0–3 are a NaN or an infinity.
        case angleNotFinite
    }

    public let reason: Reason
    /// The refused bytes (at most the first 64, so that a 64 KiB datagram is not kept whole).
    public let bytes: [UInt8]
    /// The length of the refused datagram (may exceed `bytes.count`).
    public let length: Int

    public init(_ reason: Reason, bytes: [UInt8]) {
        self.reason = reason
        self.length = bytes.count
        self.bytes = Array(bytes.prefix(64))
    }
}

extension StatePacketError: CustomStringConvertible {
    public var description: String {
        let shown = Hex.string(bytes) + (length > bytes.count ? "…" : "")
        switch reason {
        case .wrongLength:
            return "not a state packet: \(length) bytes, expected 8 (\(shown))"
        case .angleNotFinite:
            return "state packet refused: angle is NaN or infinite (\(shown))"
        }
    }
}
