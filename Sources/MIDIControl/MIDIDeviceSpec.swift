import SerialTTY

/// Which MIDI device `--input` reads:
///
/// | argument | device |
/// |---|---|
/// | `midi` | the first ALSA sequencer port that is not Midi Through |
/// | `midi:20:0`, `midi:Keystation`, `midi:Keystation:1` | an ALSA sequencer port (as `aconnect -i` lists them) |
/// | `midi:hw:1,0,0` | an ALSA rawmidi device (the controller has it to itself) |
/// | `midi-serial:PATH[@BAUD]` | a MIDI byte stream on a tty, FIFO or pipe (ttymidi-style bridges; default 115200) |
package enum MIDIDeviceSpec: Hashable, Sendable, CustomStringConvertible {
    /// nil = the first input port.
    case sequencer(String?)
    case rawMIDI(String)
    case serial(path: String, baud: Int)

    package static let forms = "midi[:CLIENT:PORT|:NAME|:hw:C,D,S], midi-serial:PATH[@BAUD]"

    /// Parses `midi…` and `midi-serial:…` arguments; nil for anything else or a bad form.
    package init?(argument text: String) {
        if text == "midi" {
            self = .sequencer(nil)
        } else if text.hasPrefix("midi-serial:") {
            var path = text.dropFirst("midi-serial:".count)
            var baud = BaudRate.default
            if let at = path.lastIndex(of: "@") {
                let digits = path[path.index(after: at)...]
                guard let b = Int(digits), BaudRate.speed(b) != nil else { return nil }
                baud = b
                path = path[..<at]
            }
            guard !path.isEmpty else { return nil }
            self = .serial(path: String(path), baud: baud)
        } else if text.hasPrefix("midi:") {
            let rest = String(text.dropFirst("midi:".count))
            guard !rest.isEmpty, !rest.contains(where: { $0.isNewline }) else { return nil }
            self = rest.hasPrefix("hw:") ? .rawMIDI(rest) : .sequencer(rest)
        } else {
            return nil
        }
    }

    package var description: String {
        switch self {
        case .sequencer(nil): "midi"
        case .sequencer(let name?): "midi:\(name)"
        case .rawMIDI(let name): "midi:\(name)"
        case .serial(let path, let baud): "midi-serial:\(path)" + (baud == BaudRate.default ? "" : "@\(baud)")
        }
    }
}
