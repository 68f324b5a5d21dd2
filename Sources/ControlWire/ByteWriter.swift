import RemoteWire

/// Big-endian field writing and bounds-checked reading for the control-message codec.
/// Readers never trap: running past the end is a typed error carrying the offset.
package struct ByteWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func u8(_ v: UInt8) { bytes.append(v) }
    package mutating func u16(_ v: UInt16) { bytes.append(UInt8(v >> 8)); bytes.append(UInt8(truncatingIfNeeded: v)) }
    package mutating func u32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }
    package mutating func u64(_ v: UInt64) { for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(s))) } }
    /// A text with a one-byte length prefix (a ``WireText`` is at most 255 bytes).
    package mutating func str8(_ s: WireText) {
        let utf8 = s.text.utf8
        u8(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }
    package mutating func raw(_ b: some Sequence<UInt8>) { bytes.append(contentsOf: b) }
    /// A hello nonce or its echo at the end of a payload: 8 bytes, or nothing for 0 (absent).
    package mutating func nonce(_ v: UInt64) { if v != 0 { u64(v) } }
}

package struct ByteReader {
    package let bytes: ArraySlice<UInt8>
    package var offset: Int

    package init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes; offset = bytes.startIndex }

    package var remaining: Int { bytes.endIndex - offset }

    package mutating func take(_ n: Int) throws(ControlMessageError) -> ArraySlice<UInt8> {
        guard n >= 0, remaining >= n else { throw ControlMessageError(.truncated, at: offset - bytes.startIndex, bytes: Array(bytes)) }
        defer { offset += n }
        return bytes[offset..<offset + n]
    }
    package mutating func u8() throws(ControlMessageError) -> UInt8 { let s = try take(1); return s[s.startIndex] }
    package mutating func u16() throws(ControlMessageError) -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
    package mutating func u32() throws(ControlMessageError) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    package mutating func u64() throws(ControlMessageError) -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
    /// Every text from the wire enters here, as a ``WireText``: made safe to show once.
    package mutating func str8() throws(ControlMessageError) -> WireText {
        let n = Int(try u8())
        let at = offset - bytes.startIndex
        let raw = try take(n)
        guard let s = String(validating: raw, as: UTF8.self) else {
            throw ControlMessageError(.badText, at: at, bytes: Array(bytes))
        }
        return WireText(s)
    }
    /// A trailing hello nonce (or echo): exactly 8 more bytes, never 0, or none at all (0).
    /// Anything else is left for ``expectEnd()`` to refuse.
    package mutating func optionalNonce() throws(ControlMessageError) -> UInt64 {
        guard remaining == 8 else { return 0 }
        let at = offset - bytes.startIndex
        let v = try u64()
        guard v != 0 else { throw ControlMessageError(.badField, at: at, bytes: Array(bytes)) }
        return v
    }
    package func expectEnd() throws(ControlMessageError) {
        guard remaining == 0 else { throw ControlMessageError(.trailingBytes, at: offset - bytes.startIndex, bytes: Array(bytes)) }
    }
}
