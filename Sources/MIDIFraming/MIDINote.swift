/// A MIDI note number with its name: pitch class (sharps) and octave, C4 = 60 (middle C).
///
/// ```
///  number = (octave + 1) × 12 + pitch class      C=0 C#=1 D=2 D#=3 E=4 F=5 F#=6 G=7 G#=8 A=9 A#=10 B=11
///       0 = C-1     21 = A0     60 = C4     69 = A4     127 = G9
/// ```
/// Octaves run from −1 to 9. Names are written with sharps (`F#3`); reading also takes flats
/// (`Gb3`, `♭`), `♯`, and a lower-case letter (`f#3`). An enharmonic name reaching across an
/// octave means what it says: `B#3` = 60 = `C4`, `Cb4` = 59 = `B3`.
package struct MIDINote: Hashable, Sendable, Comparable, CustomStringConvertible {
    package let number: UInt8

    package static let pitchClassNames = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]

    /// nil above 127.
    package init?(number: Int) {
        guard (0...127).contains(number) else { return nil }
        self.number = UInt8(number)
    }

    /// `C4`, `F#3`, `Bb2`, `C-1`, `G9`; nil for anything else or a note outside 0…127.
    package init?(name text: String) {
        var chars = Substring(text)
        guard let letter = chars.first?.uppercased(),
              let base = ["C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11][letter] else { return nil }
        chars = chars.dropFirst()
        var pitch = base
        if let accidental = chars.first {
            switch accidental {
            case "#", "♯": pitch += 1; chars = chars.dropFirst()
            case "b", "♭": pitch -= 1; chars = chars.dropFirst()
            default: break
            }
        }
        // The octave: -1…9, one digit (after an optional minus sign).
        let negative = chars.first == "-"
        if negative { chars = chars.dropFirst() }
        guard chars.count == 1, let digit = chars.first?.wholeNumberValue, chars.first?.isASCII == true else { return nil }
        guard !negative || digit == 1 else { return nil }   // "-1" is the only negative octave ("C-0" is not C0)
        let octave = negative ? -digit : digit
        guard (-1...9).contains(octave) else { return nil }
        self.init(number: (octave + 1) * 12 + pitch)
    }

    package init(_ number: UInt8) { self.number = number & 0x7F }

    /// −1…9.
    package var octave: Int { Int(number) / 12 - 1 }
    /// 0 = C … 11 = B.
    package var pitchClass: Int { Int(number) % 12 }
    /// `C4`, `F#3`, `C-1`.
    package var name: String { Self.pitchClassNames[pitchClass] + String(octave) }
    package var description: String { name }

    package static func < (a: Self, b: Self) -> Bool { a.number < b.number }
}
