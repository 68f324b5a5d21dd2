import ALSAMIDI

/// What `analog-remote midi-inputs` lists: the sequencer ports and rawmidi devices a keyboard
/// can be read from, each as the `--input` argument that opens it.
package enum MIDIInputs {
    package struct Entry: Hashable, Sendable {
        /// `midi:20:0`, `midi:hw:1,0,0`.
        package let argument: String
        package let details: String
    }

    package enum Listing: Hashable, Sendable {
        case entries([Entry])
        /// No /dev/snd here: nothing ALSA can list.
        case noSoundDevices
    }

    package static func list() -> Listing {
        let ports: [SequencerPortInfo]
        do {
            ports = try SequencerPorts.list()
        } catch {
            if case .noSoundDevices = error.kind { return .noSoundDevices }
            ports = []
        }
        var entries = ports.map { p in
            Entry(argument: "midi:\(p.address)",
                  details: "sequencer  \(p.clientName) / \(p.portName)\(p.isHardware ? "" : " (program)")")
        }
        for d in RawMIDIDevices.list() where d.hasInput {
            entries.append(Entry(argument: "midi:\(d.name)", details: "rawmidi    \(d.cardName) / \(d.deviceName)"))
        }
        return .entries(entries)
    }

    /// The text `midi-inputs` prints.
    package static func text(_ listing: Listing) -> String {
        switch listing {
        case .noSoundDevices:
            return "no MIDI inputs: this machine has no ALSA sound devices (/dev/snd is missing); a serial MIDI bridge works with --input midi-serial:PATH"
        case .entries(let entries) where entries.isEmpty:
            return "no MIDI inputs found (plug in a keyboard; `aconnect -i` lists what ALSA sees)"
        case .entries(let entries):
            let width = entries.map(\.argument.count).max() ?? 0
            return entries.map { $0.argument + String(repeating: " ", count: width - $0.argument.count + 2) + $0.details }
                .joined(separator: "\n")
        }
    }
}
