/// Turns a MIDI 1.0 byte stream (a DIN/serial line, an ALSA rawmidi port, or the bytes ALSA's
/// sequencer events decode to) into ``MIDIMessage``s, one byte at a time: each byte yields at
/// most one message. Memory is a few bytes whatever comes in.
///
/// Rules (MIDI 1.0 Detailed Specification, "Data Format" and "Running Status"):
/// - **Running status**: a channel status stays in force for following data bytes, so
///   `90 3C 40 3E 40` is two note-ons.
/// - **Note-on with velocity 0** is a note-off (`.noteOff(…, velocity: 0)`).
/// - **Real-time bytes** (F8–FF) may appear anywhere, even between the data bytes of another
///   message or inside a SysEx; they are returned at once and leave everything else untouched.
/// - **SysEx** (F0 … F7) of any length is skipped without storing it. Any status byte other
///   than real-time ends it (the spec's rule for a missing F7) and starts its own message.
/// - **System common** (F1 xx, F2 xx xx, F3 xx, F6) is skipped and, like SysEx, cancels
///   running status; F4, F5 (undefined) and a stray F7 do the same.
/// - **Data bytes with no status in force** (after power-on, after SysEx or system common) are
///   dropped: a decoder that joins a stream midway resynchronises at the next status byte.
///
/// Trap: a stream that ends midway (``isPartial``) lost the end of a message; the caller says
/// so rather than treating the missing bytes as silence.
package struct MIDIStreamDecoder: Sendable, Hashable {
    /// The channel status in force (running status), or a system-common status being skipped.
    private var status: UInt8?
    /// The first data byte of a two-data-byte message, once seen.
    private var first: UInt8?
    private var inSysEx = false
    /// Data bytes still to skip for a system-common message.
    private var commonLeft = 0

    /// Bytes dropped because no status was in force (for diagnostics).
    package private(set) var strayDataBytes = 0
    /// SysEx messages skipped (complete or cut short by a status byte).
    package private(set) var sysExSkipped = 0

    package init() {}

    /// True in the middle of a message or a SysEx: an end of stream here cut something off.
    package var isPartial: Bool { inSysEx || first != nil || commonLeft > 0 }

    /// Feeds one byte; returns the message it completes, if any.
    package mutating func decode(_ byte: UInt8) -> MIDIMessage? {
        if byte >= 0xF8 { return .realTime(byte) }
        if byte >= 0x80 { return take(status: byte) }
        if inSysEx { return nil }
        if commonLeft > 0 {
            commonLeft -= 1
            return nil
        }
        guard let status, status < 0xF0 else {
            strayDataBytes &+= 1
            return nil
        }
        let channel = status & 0x0F
        switch status & 0xF0 {
        case 0xC0: return .programChange(channel: channel, program: byte)
        case 0xD0: return .channelPressure(channel: channel, pressure: byte)
        default: break
        }
        guard let d1 = first else {
            first = byte
            return nil
        }
        first = nil
        switch status & 0xF0 {
        case 0x80: return .noteOff(channel: channel, note: d1, velocity: byte)
        case 0x90: return byte == 0 ? .noteOff(channel: channel, note: d1, velocity: 0)
                                    : .noteOn(channel: channel, note: d1, velocity: byte)
        case 0xA0: return .polyPressure(channel: channel, note: d1, pressure: byte)
        case 0xB0: return .controlChange(channel: channel, controller: d1, value: byte)
        default: return .pitchBend(channel: channel, value: PitchBend.value(lsb: d1, msb: byte))
        }
    }

    private mutating func take(status byte: UInt8) -> MIDIMessage? {
        if inSysEx {
            inSysEx = false
            sysExSkipped &+= 1
        }
        first = nil
        commonLeft = 0
        switch byte {
        case 0x80...0xEF:
            status = byte
        case 0xF0:
            status = nil
            inSysEx = true
        case 0xF1, 0xF3:
            status = nil
            commonLeft = 1
        case 0xF2:
            status = nil
            commonLeft = 2
        default:                   // F4, F5 undefined; F6 tune request; F7 end of SysEx (handled above)
            status = nil
        }
        return nil
    }

    /// Feeds `bytes`; returns the messages they complete, in order.
    package mutating func decode(_ bytes: some Sequence<UInt8>) -> [MIDIMessage] {
        var out: [MIDIMessage] = []
        for b in bytes {
            if let m = decode(b) { out.append(m) }
        }
        return out
    }
}
