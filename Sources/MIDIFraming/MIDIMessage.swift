/// One MIDI 1.0 message as a controller input reads it (``MIDIStreamDecoder`` produces them).
///
/// Channels are 0…15 here (status byte's low nibble); people and the README count 1…16.
///
/// ```
///  status   data bytes            message
///  8n kk vv                    →  noteOff(n, kk, vv)
///  9n kk vv   (vv > 0)         →  noteOn(n, kk, vv)
///  9n kk 00                    →  noteOff(n, kk, 0)        velocity 0 is a release
///  An kk pp                    →  polyPressure(n, kk, pp)
///  Bn cc vv                    →  controlChange(n, cc, vv)
///  Cn pp                       →  programChange(n, pp)
///  Dn pp                       →  channelPressure(n, pp)
///  En ll mm                    →  pitchBend(n, mm << 7 | ll)  14 bits, LSB first, centre 8192
///  F8…FF                       →  realTime(byte)            may sit inside any other message
///  F0 … F7                     →  (nothing)                 SysEx: skipped, any length
///  F1 xx, F2 xx xx, F3 xx, F6  →  (nothing)                 system common: skipped
/// ```
package enum MIDIMessage: Hashable, Sendable {
    case noteOn(channel: UInt8, note: UInt8, velocity: UInt8)
    case noteOff(channel: UInt8, note: UInt8, velocity: UInt8)
    case polyPressure(channel: UInt8, note: UInt8, pressure: UInt8)
    case controlChange(channel: UInt8, controller: UInt8, value: UInt8)
    case programChange(channel: UInt8, program: UInt8)
    case channelPressure(channel: UInt8, pressure: UInt8)
    /// 0…16383; 8192 = centre (``PitchBend``).
    case pitchBend(channel: UInt8, value: UInt16)
    /// F8 clock, FA start, FB continue, FC stop, FE active sensing, FF system reset.
    case realTime(UInt8)

    /// The channel of a channel message, nil for real-time.
    package var channel: UInt8? {
        switch self {
        case .noteOn(let c, _, _), .noteOff(let c, _, _), .polyPressure(let c, _, _), .controlChange(let c, _, _),
             .programChange(let c, _), .channelPressure(let c, _), .pitchBend(let c, _):
            return c
        case .realTime:
            return nil
        }
    }

    /// Controller numbers with a meaning here (MIDI 1.0 "Control Change Messages" table).
    package enum Controller {
        /// Damper (sustain) pedal: value ≥ 64 = down.
        package static let sustain: UInt8 = 64
        package static let allSoundOff: UInt8 = 120
        package static let resetAllControllers: UInt8 = 121
        package static let allNotesOff: UInt8 = 123
        /// 124–127 (omni off/on, mono, poly) also end every note, as all-notes-off does.
        package static let modeChanges: ClosedRange<UInt8> = 124...127
    }

    package enum RealTime {
        package static let activeSensing: UInt8 = 0xFE
        package static let systemReset: UInt8 = 0xFF
    }
}

extension MIDIMessage {
    /// The bytes of this message with its status byte (no running status): for tests and
    /// for writing phrases.
    package var bytes: [UInt8] {
        switch self {
        case .noteOn(let c, let k, let v): return [0x90 | c & 0x0F, k & 0x7F, v & 0x7F]
        case .noteOff(let c, let k, let v): return [0x80 | c & 0x0F, k & 0x7F, v & 0x7F]
        case .polyPressure(let c, let k, let p): return [0xA0 | c & 0x0F, k & 0x7F, p & 0x7F]
        case .controlChange(let c, let n, let v): return [0xB0 | c & 0x0F, n & 0x7F, v & 0x7F]
        case .programChange(let c, let p): return [0xC0 | c & 0x0F, p & 0x7F]
        case .channelPressure(let c, let p): return [0xD0 | c & 0x0F, p & 0x7F]
        case .pitchBend(let c, let value):
            let (lsb, msb) = PitchBend.bytes(value)
            return [0xE0 | c & 0x0F, lsb, msb]
        case .realTime(let b): return [b]
        }
    }
}

extension MIDIMessage: CustomStringConvertible {
    /// `note-on 1 C4 100`, `note-off 1 C4 0`, `cc 1 64 127`, `bend 1 8192`, `program 1 5`,
    /// `pressure 1 20`, `poly 1 C4 20`, `realtime FE` — channels counted 1…16, as people do.
    package var description: String {
        switch self {
        case .noteOn(let c, let k, let v): "note-on \(c + 1) \(MIDINote(k).name) \(v)"
        case .noteOff(let c, let k, let v): "note-off \(c + 1) \(MIDINote(k).name) \(v)"
        case .polyPressure(let c, let k, let p): "poly \(c + 1) \(MIDINote(k).name) \(p)"
        case .controlChange(let c, let n, let v): "cc \(c + 1) \(n) \(v)"
        case .programChange(let c, let p): "program \(c + 1) \(p)"
        case .channelPressure(let c, let p): "pressure \(c + 1) \(p)"
        case .pitchBend(let c, let v): "bend \(c + 1) \(v)"
        case .realTime(let b): "realtime " + String(b, radix: 16, uppercase: true)
        }
    }
}
