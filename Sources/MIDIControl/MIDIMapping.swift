import MIDIFraming
import RemoteWire

/// How a MIDI keyboard or pad controller becomes a ``ControllerState``: which wheel tilts, which
/// keys are which buttons, which key combinations are chords, what the deadman is. A pure value;
/// the stateful rules (held keys, the chord window, deadman, unplugging) are in ``MIDISession``.
///
/// Defaults (``standard``, docs/midi.md has the table):
/// - pitch bend → tilt, full bend = ±π/4, deadzone 0.05 with rescaling;
/// - around middle C: C4 forward, D4 backward, E4 a, F4 b, G4 x, A4 y, B4 l, C5 r,
///   C#4 start, D#4 select, F#4 home, G#4 left, A#4 right;
/// - the first four pads of the usual pad layout (notes 36–39 = C2, C#2, D2, D#2):
///   forward, backward, a, b;
/// - the C major triad below middle C (C3+E3+G3), struck within 30 ms → a+b;
/// - every channel, no deadman, velocity does not scale anything.
package struct MIDIMapping: Hashable, Sendable {
    /// Where the tilt comes from.
    package enum Tilt: Hashable, Sendable, CustomStringConvertible {
        /// The pitch-bend wheel (14 bits, springs back to the centre).
        case pitchBend
        /// A control change, 0…127 with 64 as the centre (a knob or a slider).
        case controller(UInt8)

        package var description: String {
            switch self {
            case .pitchBend: "bend"
            case .controller(let n): "cc:\(n)"
            }
        }
    }

    /// The hold-to-drive control.
    package enum Deadman: Hashable, Sendable, CustomStringConvertible {
        /// The sustain (damper) pedal, CC 64: down (≥ 64) = held.
        case sustain
        /// Any other control change: ≥ 64 = held.
        case controller(UInt8)
        /// A key, held while it is down; it sets no button of its own.
        case note(MIDINote)

        package var description: String {
            switch self {
            case .sustain: "sustain"
            case .controller(let n): "cc:\(n)"
            case .note(let n): n.name
            }
        }
    }

    /// Keys struck together (within ``chordWindow`` of the first) that mean ``buttons``.
    package struct Chord: Hashable, Sendable, CustomStringConvertible {
        package var notes: Set<MIDINote>
        package var buttons: Buttons
        package init(_ notes: Set<MIDINote>, _ buttons: Buttons) {
            self.notes = notes
            self.buttons = buttons
        }
        /// `C3+E3+G3`, lowest first.
        package var name: String { notes.sorted().map(\.name).joined(separator: "+") }
        package var description: String { "\(name) → \(buttons)" }
    }

    /// Only this channel (0…15) is read; nil = every channel.
    package var channel: UInt8?
    package var tilt: Tilt = .pitchBend
    /// Negates the angle (bend up → turn left).
    package var invertTilt = false
    /// The angle at full bend, radians, 0 < x ≤ π/2. Default: the binary32 nearest π/4.
    package var fullLockAngle = Float(Double.pi / 4)
    /// Readings with magnitude ≤ this are 0; beyond it the rest of the travel is rescaled to
    /// 0…1 (as for gamepad sticks). 0 ≤ deadzone < 1.
    package var deadzone = 0.05
    /// Key → the buttons it holds down (usually one bit; `a+b` is allowed).
    package var notes: [MIDINote: Buttons]
    package var chords: [Chord]
    /// How long after the first key of a chord the others may come. Seed 002's default, 30 ms.
    package var chordWindow: Duration = .milliseconds(30)
    package var deadman: Deadman?
    /// Scale the tilt by velocity/127 of the held forward/backward key (docs/midi.md, "Speed scale").
    package var velocityScalesTilt = false

    package init(notes: [MIDINote: Buttons] = MIDIMapping.standardNotes, chords: [Chord] = MIDIMapping.standardChords) {
        self.notes = notes
        self.chords = chords
    }

    package static let standard = MIDIMapping()

    package static let standardNotes: [MIDINote: Buttons] = {
        let table: [(String, Buttons)] = [
            ("C4", .forward), ("D4", .backward), ("E4", .a), ("F4", .b), ("G4", .x), ("A4", .y),
            ("B4", .l), ("C5", .r), ("C#4", .start), ("D#4", .select), ("F#4", .home), ("G#4", .left), ("A#4", .right),
            ("C2", .forward), ("C#2", .backward), ("D2", .a), ("D#2", .b),
        ]
        var out: [MIDINote: Buttons] = [:]
        for (name, buttons) in table {
            if let note = MIDINote(name: name) { out[note] = buttons }
        }
        return out
    }()

    package static let standardChords: [Chord] = {
        let triad = ["C3", "E3", "G3"].compactMap { MIDINote(name: $0) }
        return [Chord(Set(triad), [.a, .b])]
    }()

    /// True when `note` belongs to some chord: its meaning is decided when the chord window closes.
    package func isChordMember(_ note: MIDINote) -> Bool {
        chords.contains { $0.notes.contains(note) }
    }

    /// The tilt of a reading as −1…1 before the deadzone: the bend's 14 bits, or a controller's
    /// 7 bits with 64 as the centre (below over 64 steps, above over 63, so 0 and 127 are ±1).
    package static func fraction(controllerValue v: UInt8) -> Double {
        let d = Int(min(v, 127)) - 64
        return d < 0 ? Double(d) / 64 : Double(d) / 63
    }

    /// The angle for a raw tilt reading (−1…1): deadzone with rescaling, inversion, full lock,
    /// and the clamp to the wire's ±π/2 (Protocol.md §2.3). Never −0.
    package func angle(fraction raw: Double, scale: Double = 1) -> Float {
        let shaped = Self.shape(raw, deadzone: deadzone) * min(1, max(0, scale))
        var angle = Float((invertTilt ? -shaped : shaped) * Double(fullLockAngle))
        angle = min(ControllerState.maxAngle, max(-ControllerState.maxAngle, angle))
        if angle == 0 { angle = 0 }
        return angle
    }

    /// A tilt counts as centred for "drive only after a neutral input" within the deadzone, or
    /// within this band when the deadzone is smaller.
    package static let minimumCentreBand = 0.05

    package func isCentred(fraction raw: Double) -> Bool {
        raw.magnitude <= max(deadzone, Self.minimumCentreBand)
    }

    /// Deadzone with rescaling: |x| ≤ deadzone → 0; beyond, (|x| − deadzone)/(1 − deadzone) with
    /// the sign kept, so the output is continuous and exactly ±1 at the ends.
    package static func shape(_ value: Double, deadzone: Double) -> Double {
        guard value.isFinite else { return 0 }
        let clamped = min(1, max(-1, value))
        guard clamped.magnitude > deadzone else { return 0 }
        let r = min(1, (clamped.magnitude - deadzone) / (1 - deadzone))
        return clamped < 0 ? -r : r
    }
}
