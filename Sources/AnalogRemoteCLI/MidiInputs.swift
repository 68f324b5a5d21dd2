import ArgumentParser
import CommandSupport
import Console
import MIDIControl
import SystemIO

struct MidiInputs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "midi-inputs",
        abstract: "List the MIDI keyboards and controllers ALSA sees, each as the --input argument that reads it.",
        discussion: """
            Sequencer ports (midi:CLIENT:PORT, as `aconnect -i` lists them; the usual way: other \
            programs can listen too) and rawmidi devices (midi:hw:C,D,S; the controller has the \
            device to itself). A MIDI byte stream on a tty or pipe (a ttymidi-style bridge) is read \
            with --input midi-serial:PATH and is not listed. On a machine without /dev/snd it says \
            so in one line. Exit 0 whatever it finds.
            """)

    func run() throws {
        try runReporting {
            print(MIDIInputs.text(MIDIInputs.list()))
            return .done
        }
    }
}
