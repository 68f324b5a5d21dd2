import ConfigFile
import MIDIFraming
import RemoteWire
import SystemIO
import TOMLKit

/// The `[midi]` part of a controller config file (`--config FILE`, TOML). Other top-level tables
/// belong to other inputs and are left alone; inside `[midi]` every key must be known, so a typo
/// is an error naming the key rather than a silently ignored setting.
///
/// ```toml
/// [midi]
/// channel = 0                 # 0 = every channel, else 1…16
/// tilt = "bend"               # "bend" (pitch bend) or "cc:N" (a knob or slider, 64 = centre)
/// invert_tilt = false
/// full_lock = 0.7853982       # radians at full bend, 0 < x ≤ π/2 = 1.5707964
/// deadzone = 0.05             # 0 ≤ x < 1
/// deadman = ""                # "" none, "sustain", "cc:N", or a key such as "C2"
/// velocity_scale = false      # the tilt × velocity/127 of the held forward/backward key
/// chord_window_ms = 30        # 1…500
///
/// [midi.notes]                # replaces the default key table: key = buttons
/// C4 = "forward"
/// "F#3" = "a+b"
///
/// [midi.chords]               # replaces the default chords: "KEY+KEY+…" = buttons
/// "C3+E3+G3" = "a+b"
/// ```
package struct MIDIConfig: Hashable, Sendable {
    package var mapping: MIDIMapping
    /// The file it came from, for messages ("" = built-in defaults).
    package var file: String

    package init(mapping: MIDIMapping = .standard, file: String = "") {
        self.mapping = mapping
        self.file = file
    }

    package static let maximumChordWindowMilliseconds = 500

    package static func load(path: String) throws(MIDIConfigError) -> MIDIConfig {
        let text: String
        do {
            text = try ConfigFileReader.read(path)
        } catch {
            throw MIDIConfigError(file: path, key: nil, problem: error.problem(what: "the MIDI config", allowedText: "a UTF-8 TOML file"))
        }
        return try parse(text, file: path)
    }

    package static func parse(_ text: String, file: String) throws(MIDIConfigError) -> MIDIConfig {
        let named = file.isEmpty ? "midi config" : file
        let root = try TOMLDocument.parse(text, file: named)
        var config = MIDIConfig(file: file)
        guard let value = root["midi"] else { return config }
        guard let table = value.table else {
            throw MIDIConfigError(file: named, key: "midi", problem: "must be a table ([midi])")
        }
        let reader = Reader(file: file)
        for key in table.keys.sorted() {
            guard let value = table[key] else { continue }
            try reader.apply(key: key, value: value, to: &config.mapping)
        }
        try reader.check(config.mapping)
        return config
    }
}

/// A MIDI table that cannot be used: which file, which key, what is allowed. One line.
package typealias MIDIConfigError = ConfigFileError

private struct Reader {
    let file: String

    static let topKeys = ["channel", "chord_window_ms", "chords", "deadman", "deadzone", "full_lock", "invert_tilt",
                          "notes", "tilt", "velocity_scale"]

    func fail(_ key: String, _ problem: String) -> MIDIConfigError {
        MIDIConfigError(file: file.isEmpty ? "midi config" : file, key: key, problem: problem)
    }

    static let noteAdvice = "a note name such as C4 (middle C = 60), F#3 or Bb2; octaves -1…9, C-1 = 0 … G9 = 127"

    func apply(key: String, value: any TOMLValueConvertible, to mapping: inout MIDIMapping) throws(MIDIConfigError) {
        let path = "midi." + key
        switch key {
        case "channel":
            guard let n = value.int, (0...16).contains(n) else {
                throw fail(path, "\(show(value)) is not allowed (allowed: 0 for every channel, or 1…16)")
            }
            mapping.channel = n == 0 ? nil : UInt8(n - 1)
        case "tilt":
            guard let text = value.string else { throw fail(path, "\(show(value)) is not allowed (allowed: \"bend\" or \"cc:N\" with N 0…119)") }
            if text.lowercased() == "bend" {
                mapping.tilt = .pitchBend
            } else if let n = controller(text) {
                mapping.tilt = .controller(n)
            } else {
                throw fail(path, "\(show(value)) is not allowed (allowed: \"bend\" or \"cc:N\" with N 0…119)")
            }
        case "invert_tilt":
            guard let flag = value.bool else { throw fail(path, "\(show(value)) is not allowed (allowed: true or false)") }
            mapping.invertTilt = flag
        case "full_lock":
            // Compared as Float: 1.5707964 and Double.pi / 2 both mean the wire's π/2.
            guard let x = number(value), x > 0, Float(x) <= ControllerState.maxAngle else {
                throw fail(path, "\(show(value)) is not allowed (allowed: radians, more than 0 and at most π/2 = \(ControllerState.maxAngle))")
            }
            mapping.fullLockAngle = Float(x)
        case "deadzone":
            guard let x = number(value), x >= 0, x < 1 else {
                throw fail(path, "\(show(value)) is not allowed (allowed: a number from 0 up to, not including, 1)")
            }
            mapping.deadzone = x
        case "deadman":
            let allowed = "\"\" for none, \"sustain\", \"cc:N\" with N 0…119, or \(Self.noteAdvice)"
            guard let text = value.string else { throw fail(path, "\(show(value)) is not allowed (allowed: \(allowed))") }
            if text.isEmpty {
                mapping.deadman = nil
            } else if text.lowercased() == "sustain" {
                mapping.deadman = .sustain
            } else if let n = controller(text) {
                mapping.deadman = n == MIDIMessage.Controller.sustain ? .sustain : .controller(n)
            } else if let note = MIDINote(name: text) {
                mapping.deadman = .note(note)
            } else {
                throw fail(path, "\(show(value)) is not allowed (allowed: \(allowed))")
            }
        case "velocity_scale":
            guard let flag = value.bool else { throw fail(path, "\(show(value)) is not allowed (allowed: true or false)") }
            mapping.velocityScalesTilt = flag
        case "chord_window_ms":
            guard let n = value.int, (1...MIDIConfig.maximumChordWindowMilliseconds).contains(n) else {
                throw fail(path, "\(show(value)) is not allowed (allowed: whole milliseconds, 1…\(MIDIConfig.maximumChordWindowMilliseconds))")
            }
            mapping.chordWindow = .milliseconds(n)
        case "notes":
            guard let table = value.table else { throw fail(path, "must be a table ([midi.notes]: key = buttons)") }
            var notes: [MIDINote: Buttons] = [:]
            for name in table.keys.sorted() {
                guard let note = MIDINote(name: name) else {
                    throw fail("\(path).\(name)", "\"\(name)\" is not a key (allowed: \(Self.noteAdvice))")
                }
                guard let element = table[name] else { continue }
                notes[note] = try buttons(element, key: "\(path).\(name)")
            }
            mapping.notes = notes
        case "chords":
            guard let table = value.table else { throw fail(path, "must be a table ([midi.chords]: \"KEY+KEY\" = buttons)") }
            var chords: [MIDIMapping.Chord] = []
            for name in table.keys.sorted() {
                var members: Set<MIDINote> = []
                for part in name.split(separator: "+", omittingEmptySubsequences: false) {
                    guard let note = MIDINote(name: String(part)) else {
                        throw fail("\(path).\(name)", "\"\(part)\" is not a key (a chord is keys joined by +, e.g. \"C3+E3+G3\"; keys: \(Self.noteAdvice))")
                    }
                    members.insert(note)
                }
                guard members.count >= 2 else {
                    throw fail("\(path).\(name)", "a chord needs at least two different keys (bind one key under [midi.notes])")
                }
                guard !chords.contains(where: { $0.notes == members }) else {
                    throw fail("\(path).\(name)", "the same keys are already a chord")
                }
                guard let element = table[name] else { continue }
                chords.append(.init(members, try buttons(element, key: "\(path).\(name)")))
            }
            mapping.chords = chords
        default:
            throw fail(path, "unknown key (allowed: \(Self.topKeys.joined(separator: ", ")))")
        }
    }

    /// Rules across keys.
    func check(_ mapping: MIDIMapping) throws(MIDIConfigError) {
        if case .controller(let t) = mapping.tilt {
            if mapping.deadman == .controller(t) || (mapping.deadman == .sustain && t == MIDIMessage.Controller.sustain) {
                throw fail("midi.deadman", "cc:\(t) is already the tilt (midi.tilt): choose another control")
            }
        }
    }

    /// `cc:N` with N 0…119 (120–127 are channel mode messages).
    func controller(_ text: String) -> UInt8? {
        let lowered = text.lowercased()
        guard lowered.hasPrefix("cc:"), let n = Int(lowered.dropFirst(3)), (0...119).contains(n) else { return nil }
        return UInt8(n)
    }

    func buttons(_ value: any TOMLValueConvertible, key: String) throws(MIDIConfigError) -> Buttons {
        let advice = "button names joined by + (\(Buttons.names.map(\.name).joined(separator: " "))), or \"none\""
        guard let text = value.string, let b = Buttons(parsing: Substring(text)), b.isSubset(of: .defined),
              text.lowercased() == "none" || !b.isEmpty, !text.lowercased().hasPrefix("0x"), Int(text) == nil else {
            throw fail(key, "\(show(value)) is not allowed (allowed: \(advice))")
        }
        return b
    }

    func number(_ value: any TOMLValueConvertible) -> Double? { TOMLDocument.number(value) }

    func show(_ value: any TOMLValueConvertible) -> String { TOMLDocument.show(value) }
}
