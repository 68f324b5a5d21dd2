import MIDIControl

/// The `--input` choices. To add a source: a case here, its parsing in ``init(argument:)``, and
/// its construction in ``ControlCommand/makeSource(_:)``.
package enum InputSpec: Equatable, Sendable {
    /// The raw-mode keyboard UI on the terminal (default when stdin is a terminal).
    case keyboard
    /// `ANGLE BUTTONS` lines on stdin (default when stdin is not a terminal).
    case stdin
    /// A timed script file: `script:FILE`.
    case script(path: String)
    /// A gamepad: `gamepad` (the first pad with a mapping) or `gamepad:WHICH` (index, name
    /// substring or GUID) — ``GamepadInput``.
    case gamepad(String?)
    /// A MIDI keyboard or pad controller: `midi`, `midi:PORT`, `midi:hw:C,D,S`,
    /// `midi-serial:PATH[@BAUD]` — ``MIDIInput``.
    case midi(MIDIDeviceSpec)
    /// A recording made with `--record`, played back: `replay:FILE` — ``ReplaySource``.
    case replay(path: String)

    /// The forms accepted, for help texts.
    package static let forms = "keyboard, stdin, script:FILE, replay:FILE, gamepad[:WHICH], \(MIDIDeviceSpec.forms)"

    package init?(argument: String) {
        switch argument {
        case "keyboard": self = .keyboard
        case "stdin", "-": self = .stdin
        case "gamepad": self = .gamepad(nil)
        default:
            if argument.hasPrefix("script:"), argument.count > 7 {
                self = .script(path: String(argument.dropFirst(7)))
            } else if argument.hasPrefix("replay:"), argument.count > 7 {
                self = .replay(path: String(argument.dropFirst(7)))
            } else if argument.hasPrefix("gamepad:"), argument.count > 8 {
                self = .gamepad(String(argument.dropFirst(8)))
            } else if argument == "midi" || argument.hasPrefix("midi:") || argument.hasPrefix("midi-serial:") {
                guard let spec = MIDIDeviceSpec(argument: argument) else { return nil }
                self = .midi(spec)
            } else {
                return nil
            }
        }
    }

    /// Keyboard on a terminal, lines otherwise.
    package static func `default`(stdinIsTerminal: Bool) -> InputSpec {
        stdinIsTerminal ? .keyboard : .stdin
    }
}
