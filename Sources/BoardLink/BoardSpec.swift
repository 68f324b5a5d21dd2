import BoardProtocol
import SerialTTY

/// Which board to talk to, as given to `--board`:
///
/// | spec | board |
/// |---|---|
/// | `sim` | the simulated board with the motors firmware, in this process |
/// | `sim:stock`, `sim:motors` | the simulated board with that firmware, in this process |
/// | `serial:/dev/ttyACM0[@115200]` | the kit over USB serial (text protocol) |
/// | `midi:hw:1,0,0` | the kit's iOS build over ALSA rawmidi (SysEx out, note pairs in) |
/// | `midi-serial:PATH[@115200]` | the same MIDI byte stream over a tty (ttymidi-style bridges, `board-sim --midi`) |
package enum BoardSpec: Hashable, Sendable, CustomStringConvertible {
    /// The simulated board in this process, running `firmware`.
    case simulated(BoardProfileKind)
    case serial(path: String, baud: Int)
    case midi(device: String)
    case midiSerial(path: String, baud: Int)

    /// What is allowed, for messages.
    package static let forms = "sim[:stock|:motors], serial:/dev/ttyACM0[@115200], midi:hw:1,0,0 or midi-serial:PATH[@115200]"

    /// `sim`: the in-process simulated board with the motors firmware (as before profiles).
    package static let simulated = BoardSpec.simulated(.motors)

    package init(_ text: String) throws(BoardLinkError) {
        func bad(_ why: String) -> BoardLinkError {
            BoardLinkError(.badSpec, device: text, "bad board spec \"\(text)\": \(why)")
        }
        func pathAndBaud(_ rest: Substring) throws(BoardLinkError) -> (String, Int) {
            var path = rest
            var baud = BaudRate.default
            if let at = rest.lastIndex(of: "@") {
                let digits = rest[rest.index(after: at)...]
                if !digits.isEmpty && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber) {
                    guard let b = Int(digits), BaudRate.speed(b) != nil else {
                        throw bad("baud \(digits) is not one of \(BaudRate.allowedList)")
                    }
                    baud = b
                    path = rest[..<at]
                }
            }
            guard !path.isEmpty else { throw bad("the device path is missing (e.g. serial:/dev/ttyACM0)") }
            return (String(path), baud)
        }
        if text == "sim" {
            self = .simulated(.motors)
        } else if text.hasPrefix("sim:") {
            guard let firmware = BoardProfileKind(rawValue: String(text.dropFirst("sim:".count))) else {
                throw bad("the simulated firmware is sim:stock or sim:motors")
            }
            self = .simulated(firmware)
        } else if text.hasPrefix("serial:") {
            let (path, baud) = try pathAndBaud(text.dropFirst("serial:".count))
            self = .serial(path: path, baud: baud)
        } else if text.hasPrefix("midi-serial:") {
            let (path, baud) = try pathAndBaud(text.dropFirst("midi-serial:".count))
            self = .midiSerial(path: path, baud: baud)
        } else if text.hasPrefix("midi:") {
            let device = text.dropFirst("midi:".count)
            guard !device.isEmpty, !device.contains(where: \.isWhitespace) else {
                throw bad("the ALSA device is missing (e.g. midi:hw:1,0,0; `analog-remote boards` lists them)")
            }
            self = .midi(device: String(device))
        } else {
            throw bad("expected \(Self.forms)")
        }
    }

    /// The spec as written (a default baud left out): `serial:/dev/ttyACM0`.
    package var description: String {
        switch self {
        case .simulated(let firmware): firmware == .motors ? "sim" : "sim:\(firmware.rawValue)"
        case let .serial(path, baud): "serial:\(path)" + (baud == BaudRate.default ? "" : "@\(baud)")
        case let .midi(device): "midi:\(device)"
        case let .midiSerial(path, baud): "midi-serial:\(path)" + (baud == BaudRate.default ? "" : "@\(baud)")
        }
    }

    /// The device for messages, without the baud: `serial:/dev/ttyACM0`.
    package var device: String {
        switch self {
        case .simulated(let firmware): firmware == .motors ? "sim" : "sim:\(firmware.rawValue)"
        case let .serial(path, _): "serial:\(path)"
        case let .midi(device): "midi:\(device)"
        case let .midiSerial(path, _): "midi-serial:\(path)"
        }
    }
}
