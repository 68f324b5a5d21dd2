/// A USB-MIDI 1.0 event packet: `[cable<<4 | CIN] [MIDI_0] [MIDI_1] [MIDI_2]`.
package struct USBMIDIPacket: Hashable, Sendable, CustomStringConvertible {
    package var header: UInt8
    package var byte1: UInt8
    package var byte2: UInt8
    package var byte3: UInt8

    package init(header: UInt8, _ byte1: UInt8, _ byte2: UInt8, _ byte3: UInt8) {
        self.header = header
        self.byte1 = byte1
        self.byte2 = byte2
        self.byte3 = byte3
    }

    package var codeIndexNumber: UInt8 { header & 0x0F }
    package var cable: UInt8 { header >> 4 }
    package var bytes: [UInt8] { [header, byte1, byte2, byte3] }

    /// MIDI bytes per CIN, as Linux copies them to the rawmidi input (`snd_usbmidi_cin_length`).
    static let cinLength: [Int] = [0, 0, 2, 3, 3, 1, 2, 3, 3, 3, 3, 3, 2, 2, 3, 1]

    /// What the Linux rawmidi input delivers for this packet: the CIN's byte count, copied
    /// verbatim; a packet whose header is 0 is skipped.
    package var midiBytes: [UInt8] {
        guard header != 0 else { return [] }
        return Array([byte1, byte2, byte3].prefix(Self.cinLength[Int(codeIndexNumber)]))
    }

    package var description: String {
        bytes.map { b in
            let s = String(b, radix: 16, uppercase: true)
            return s.count < 2 ? "0" + s : s
        }.joined(separator: " ")
    }
}

/// The Linux kernel's host → device conversion (`snd_usbmidi_transmit_byte` in
/// `sound/usb/midi.c`): MIDI bytes written to a rawmidi port become USB-MIDI packets. Used by the
/// simulated board to see a SysEx exactly as the firmware's `MidiUSB.read()` would.
///
/// Its traps, kept on purpose: a status byte inside a SysEx aborts it with no end packet; data
/// bytes with no status (plain ASCII without F0) are dropped; real-time bytes pass through at
/// once, even inside a SysEx; channel messages keep running status.
package struct USBMIDIPacketizer: Sendable, Hashable {
    private enum State: Sendable, Hashable { case unknown, oneParam, twoParam1, twoParam2, sysex0, sysex1, sysex2 }
    private var state: State = .unknown
    private var data: (UInt8, UInt8) = (0, 0)
    package var cable: UInt8

    package init(cable: UInt8 = 0) { self.cable = cable }

    package static func == (a: Self, b: Self) -> Bool {
        a.state == b.state && a.data == b.data && a.cable == b.cable
    }
    package func hash(into h: inout Hasher) {
        h.combine(state); h.combine(data.0); h.combine(data.1); h.combine(cable)
    }

    package mutating func push(_ b: UInt8, into out: inout [USBMIDIPacket]) {
        let p0 = cable << 4
        func emit(_ cin: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
            out.append(USBMIDIPacket(header: p0 | cin, b1, b2, b3))
        }
        if b >= 0xF8 {
            emit(0x0F, b, 0, 0)
        } else if b >= 0xF0 {
            switch b {
            case 0xF0: data.0 = b; state = .sysex1
            case 0xF1, 0xF3: data.0 = b; state = .oneParam
            case 0xF2: data.0 = b; state = .twoParam1
            case 0xF4, 0xF5: state = .unknown
            case 0xF6: emit(0x05, 0xF6, 0, 0); state = .unknown
            default: // 0xF7
                switch state {
                case .sysex0: emit(0x05, 0xF7, 0, 0)
                case .sysex1: emit(0x06, data.0, 0xF7, 0)
                case .sysex2: emit(0x07, data.0, data.1, 0xF7)
                default: break
                }
                state = .unknown
            }
        } else if b >= 0x80 {
            data.0 = b
            state = (0xC0...0xDF).contains(b) ? .oneParam : .twoParam1
        } else {
            switch state {
            case .oneParam:
                if data.0 < 0xF0 {
                    emit(data.0 >> 4, data.0, b, 0)
                } else {
                    emit(0x02, data.0, b, 0)
                    state = .unknown
                }
            case .twoParam1:
                data.1 = b
                state = .twoParam2
            case .twoParam2:
                if data.0 < 0xF0 {
                    emit(data.0 >> 4, data.0, data.1, b)
                    state = .twoParam1
                } else {
                    emit(0x03, data.0, data.1, b)
                    state = .unknown
                }
            case .sysex0: data.0 = b; state = .sysex1
            case .sysex1: data.1 = b; state = .sysex2
            case .sysex2: emit(0x04, data.0, data.1, b); state = .sysex0
            case .unknown: break
            }
        }
    }

    package mutating func push(_ bytes: some Sequence<UInt8>) -> [USBMIDIPacket] {
        var out: [USBMIDIPacket] = []
        for b in bytes { push(b, into: &out) }
        return out
    }
}
