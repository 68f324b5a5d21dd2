import ConfigFile
import Foundation
import MIDIControl
import MIDIFraming
import RemoteWire
import TestSupport
import Testing

@Suite struct MIDIConfigParsing {
    @Test func noMidiTableIsTheDefault() throws {
        let config = try MIDIConfig.parse("[gamepad]\ndeadzone = 0.1\n", file: "c.toml")
        #expect(config.mapping == .standard)
    }

    @Test func everyKey() throws {
        let text = """
            [midi]
            channel = 10
            tilt = "cc:1"
            invert_tilt = true
            full_lock = 1.5707964
            deadzone = 0
            deadman = "sustain"
            velocity_scale = true
            chord_window_ms = 50

            [midi.notes]
            C4 = "forward"
            "F#3" = "a+b"
            Bb2 = "none"

            [midi.chords]
            "C3+E3+G3" = "x+y"
            "D3+F#3" = "backward"
            """
        let m = try MIDIConfig.parse(text, file: "c.toml").mapping
        #expect(m.channel == 9)
        #expect(m.tilt == .controller(1))
        #expect(m.invertTilt && m.velocityScalesTilt)
        #expect(m.fullLockAngle == ControllerState.maxAngle)
        #expect(m.deadzone == 0)
        #expect(m.deadman == .sustain)
        #expect(m.chordWindow == .milliseconds(50))
        #expect(m.notes == [MIDINote(name: "C4")!: .forward, MIDINote(name: "F#3")!: [.a, .b], MIDINote(name: "A#2")!: []])
        #expect(Set(m.chords.map(\.description)) == ["C3+E3+G3 → x+y", "D3+F#3 → backward"])
    }

    @Test func deadmanForms() throws {
        func deadman(_ text: String) throws -> MIDIMapping.Deadman? {
            try MIDIConfig.parse("[midi]\ndeadman = \"\(text)\"\n", file: "c.toml").mapping.deadman
        }
        #expect(try deadman("") == nil)
        #expect(try deadman("cc:64") == .sustain)
        #expect(try deadman("cc:67") == .controller(67))
        #expect(try deadman("C2") == .note(MIDINote(name: "C2")!))
    }

    /// Each bad file is one error naming the key, and what is allowed.
    @Test(arguments: [
        ("[midi]\nchanel = 1\n", "c.toml: midi.chanel: unknown key (allowed: channel, chord_window_ms"),
        ("[midi]\nchannel = 17\n", "c.toml: midi.channel: 17 is not allowed (allowed: 0 for every channel, or 1…16)"),
        ("[midi]\ntilt = \"wheel\"\n", "c.toml: midi.tilt: \"wheel\" is not allowed"),
        ("[midi]\ntilt = \"cc:120\"\n", "c.toml: midi.tilt: \"cc:120\" is not allowed"),
        ("[midi]\nfull_lock = 2\n", "c.toml: midi.full_lock: 2 is not allowed"),
        ("[midi]\ndeadzone = 1\n", "c.toml: midi.deadzone: 1"),
        ("[midi]\ndeadman = \"pedal\"\n", "c.toml: midi.deadman: \"pedal\" is not allowed"),
        ("[midi]\nchord_window_ms = 0\n", "c.toml: midi.chord_window_ms: 0 is not allowed"),
        ("[midi.notes]\nH4 = \"a\"\n", "c.toml: midi.notes.H4: \"H4\" is not a key (allowed: a note name such as C4"),
        ("[midi.notes]\nC4 = \"jump\"\n", "c.toml: midi.notes.C4: \"jump\" is not allowed (allowed: button names joined by +"),
        ("[midi.notes]\nC4 = \"0x8000\"\n", "c.toml: midi.notes.C4: \"0x8000\" is not allowed"),
        ("[midi.chords]\n\"C3+X3\" = \"a\"\n", "c.toml: midi.chords.C3+X3: \"X3\" is not a key"),
        ("[midi.chords]\n\"C3+C3\" = \"a\"\n", "c.toml: midi.chords.C3+C3: a chord needs at least two different keys"),
        ("[midi]\ntilt = \"cc:64\"\ndeadman = \"sustain\"\n", "c.toml: midi.deadman: cc:64 is already the tilt"),
        ("midi = 3\n", "c.toml: midi: must be a table ([midi])"),
        ("[midi\n", "c.toml: line 1"),
        // Headers TOMLKit's toml++ would abort the process on (a fuzz finding): refused first.
        ("[?x]\n", "c.toml: line 1: a table header must start with a key name"),
        ("x = 1\n [.a]\n", "c.toml: line 2: a table header must start with a key name"),
        ("[[ +x]]\n", "c.toml: line 1: a table header"),
        ("[\n", "c.toml: line 1: a table header"),
        ("[é]\n", "c.toml: line 1: a table header"),
        ("[\u{0902}]\n", "c.toml: line 1: a table header"),             // a combining mark joins "[" in one Character
        ("[midi]\ndeadman = [}\n", "c.toml: line 2: a } where an array element belongs"),
        ("[midi]\nx = [1, # c\n\n }\n", "c.toml: line 4: a } where an array element belongs"),
    ])
    func badFilesNameTheKey(text: String, message: String) {
        do {
            _ = try MIDIConfig.parse(text, file: "c.toml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error.description)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func bracesInsideStringsAndInlineTablesAreFine() throws {
        let config = try MIDIConfig.parse("[midi]\n# [}\n[midi.notes]\nC4 = \"forward\" # , }\n", file: "c.toml")
        #expect(config.mapping.notes.count == 1)
        let other = "[other]\nx = \"[}\"\ny = 'a,}'\nz = {a = 1}\nw = [1, {a = 2}]\nv = \"\\\"[}\"\n"
        #expect(try MIDIConfig.parse(other, file: "c.toml").mapping == .standard)
    }

    @Test func anUnreadableFileSaysSo() {
        #expect(throws: MIDIConfigError.self) { try MIDIConfig.load(path: "/nonexistent/midi.toml") }
    }

    /// The MIDI config goes through the config files' reader: a FIFO is never opened.
    @Test func aFIFOIsRefusedWithoutHanging() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("analog-remote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.path + "/midi.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect {
            try MIDIConfig.load(path: fifo)
        } throws: { error in
            "\(error)".contains("a FIFO, not a regular file")
        }
    }

    @Test func theExampleFileIsTheDefault() throws {
        let config = try MIDIConfig.load(path: Paths.repositoryFile("config-examples/midi.toml").path)
        #expect(config.mapping == .standard)
    }
}

@Suite struct MIDIDeviceSpecs {
    @Test func forms() {
        #expect(MIDIDeviceSpec(argument: "midi") == .sequencer(nil))
        #expect(MIDIDeviceSpec(argument: "midi:20:0") == .sequencer("20:0"))
        #expect(MIDIDeviceSpec(argument: "midi:Keystation 49") == .sequencer("Keystation 49"))
        #expect(MIDIDeviceSpec(argument: "midi:hw:1,0,0") == .rawMIDI("hw:1,0,0"))
        #expect(MIDIDeviceSpec(argument: "midi-serial:/dev/ttyUSB0") == .serial(path: "/dev/ttyUSB0", baud: 115200))
        #expect(MIDIDeviceSpec(argument: "midi-serial:/dev/ttyUSB0@38400") == .serial(path: "/dev/ttyUSB0", baud: 38400))
        for bad in ["midi:", "midi-serial:", "midi-serial:/x@31", "midi-serial:@9600", "midix", "serial:/x"] {
            #expect(MIDIDeviceSpec(argument: bad) == nil, "\(bad)")
        }
    }
}
