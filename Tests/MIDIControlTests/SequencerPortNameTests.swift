import ALSAMIDI
import Testing

/// How `midi:NAME` finds a sequencer port (no ALSA needed: the rule works on a list).
@Suite struct SequencerPortNames {
    let ports = [
        SequencerPortInfo(client: 14, port: 0, clientName: "Midi Through", portName: "Midi Through Port-0", isHardware: false),
        SequencerPortInfo(client: 20, port: 0, clientName: "Keystation 49 MK3", portName: "Keystation 49 MK3 MIDI 1", isHardware: true),
        SequencerPortInfo(client: 20, port: 1, clientName: "Keystation 49 MK3", portName: "Keystation 49 MK3 MIDI 2", isHardware: true),
        SequencerPortInfo(client: 24, port: 0, clientName: "MPD218", portName: "MPD218 Port A", isHardware: true),
        SequencerPortInfo(client: 128, port: 0, clientName: "VMPK Output", portName: "out", isHardware: false),
    ]

    func resolve(_ text: String) -> String? { SequencerPorts.resolve(text, in: ports)?.address }

    @Test func numbers() {
        #expect(resolve("20:1") == "20:1")
        #expect(resolve("24:0") == "24:0")
        #expect(resolve("24") == "24:0")
        #expect(resolve("24:3") == nil)
        #expect(resolve("99:0") == nil)
    }

    @Test func names() {
        #expect(resolve("Keystation 49 MK3") == "20:0")
        #expect(resolve("keystation 49 mk3:1") == "20:1")
        #expect(resolve("Keystation 49 MK3 MIDI 2") == "20:1")     // a port's own name
        #expect(resolve("mpd") == "24:0")                          // part of a name
        #expect(resolve("VMPK") == "128:0")
        #expect(resolve("Launchkey") == nil)
        #expect(resolve("") == nil)
        #expect(resolve(":0") == nil)
    }

    @Test func plainMidiSkipsMidiThrough() {
        #expect(ports.first(where: SequencerPorts.isDefaultCandidate)?.address == "20:0")
    }
}
