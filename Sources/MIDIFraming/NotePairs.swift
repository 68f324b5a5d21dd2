/// Board → host: the kit's iOS build sends its text as Note-On messages on channel 1, two
/// characters per note: note number = first character, velocity = second, an odd length padded
/// with 0x00.
///
/// ```
///  "\r\n>"  →  90 0D 0A   90 3E 00
///              └ "\r\n" ┘ └ ">" + pad ┘
/// ```
/// On USB each note is the packet `09 90 c1 c2`; the Linux rawmidi stream carries `90 c1 c2`.
package enum NotePairs {
    package static let noteOn: UInt8 = 0x90

    /// The MIDI bytes the firmware's `midi_send` produces for `text` (each character masked to
    /// 7 bits, as the firmware does).
    package static func encode(_ text: some Collection<UInt8>) -> [UInt8] {
        packets(text).flatMap { [$0.byte1, $0.byte2, $0.byte3] }
    }

    /// The same as USB-MIDI event packets (cable 0, CIN 9).
    package static func packets(_ text: some Collection<UInt8>) -> [USBMIDIPacket] {
        var out: [USBMIDIPacket] = []
        out.reserveCapacity((text.count + 1) / 2)
        var iterator = text.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next() ?? 0
            out.append(USBMIDIPacket(header: 0x09, noteOn, first & 0x7F, second & 0x7F))
        }
        return out
    }
}

/// Turns the board's MIDI stream back into text, one byte at a time.
///
/// Tolerates what MIDI stacks do to the stream on the way:
/// - running status: `90 57 20 30 66` (the second note without its status byte);
/// - a pad note (velocity 0) rewritten as a Note-Off, `80 3E 40`: a Note-Off carries one
///   character, its velocity is not text;
/// - real-time bytes (F8–FF) anywhere, other channel messages and SysEx: skipped;
/// - any channel, not only channel 1.
/// 0x00 is never text (the firmware's strings cannot hold NUL): pads are dropped.
package struct NotePairDecoder: Sendable, Hashable {
    private var status: UInt8?
    private var first: UInt8?
    private var inSysEx = false

    package init() {}

    /// Feeds one byte; returns the 0, 1 or 2 characters it completes, appended to `text`.
    package mutating func decode(_ byte: UInt8, into text: inout [UInt8]) {
        if byte >= 0xF8 { return }                    // real-time: invisible to everything else
        if byte >= 0xF0 {                             // system common and SysEx: cancel running status
            inSysEx = byte == 0xF0
            status = nil
            first = nil
            return
        }
        if byte >= 0x80 {                             // channel status
            inSysEx = false
            status = byte
            first = nil
            return
        }
        guard !inSysEx, let status else { return }    // data without a status: not ours
        switch status & 0xF0 {
        case 0x80, 0x90, 0xA0, 0xB0, 0xE0:            // two data bytes
            guard let c1 = first else { first = byte; return }
            first = nil
            if status & 0xF0 == 0x90 {
                if c1 != 0 { text.append(c1) }
                if byte != 0 { text.append(byte) }
            } else if status & 0xF0 == 0x80 {
                if c1 != 0 { text.append(c1) }
            }
        default:                                      // C0, D0: one data byte, not text
            break
        }
    }

    package mutating func decode(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var text: [UInt8] = []
        for b in bytes { decode(b, into: &text) }
        return text
    }
}
