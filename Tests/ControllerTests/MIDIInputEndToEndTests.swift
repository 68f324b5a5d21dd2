import Foundation
import Controller
import MIDIControl
import RemoteWire
import SerialTTY
import SystemIO
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `control --input midi-serial:…` and `midi:` as a person runs them: the built binary, MIDI
/// bytes written into a pseudo-terminal (as a ttymidi-style bridge would), packets caught by a
/// UDP socket on loopback that the test owns.
@Suite(.serialized) struct MIDIInputEndToEndTests {
    /// Consecutive equal states folded into one (the resends every period repeat a state).
    func distinct(_ states: [ControllerState]) -> [ControllerState] {
        var out: [ControllerState] = []
        for s in states where out.last != s { out.append(s) }
        return out
    }

    @Test func aPlayedPhraseGivesTheExactPacketsAndUnpluggingIsNeutral() throws {
        let pty = try PseudoTerminal()
        var ptyOpen = true
        defer { if ptyOpen { pty.close() } }
        let capture = try PacketCapture()
        let child = try ChildProcess(analogRemote: ["control", "--peer", capture.peer, "--plain", "--quiet", "--rate", "1",
                                                    "--input", "midi-serial:\(pty.slavePath)"])
        defer { child.stop() }
        #expect(try capture.waitFor(.neutral), "no first packet; stderr: \(child.stderr)")
        // The controller has the device open once its start notice is out.
        #expect(child.waitForOutput { _, err in err.contains("MIDI input connected") })

        let forward = ControllerState(buttons: .forward)
        let chord = ControllerState(buttons: [.forward, .a, .b])
        let quarterPi = Float(Double.pi / 4)
        let phrase: [(String, [UInt8], ControllerState)] = [
            ("C4 down: forward", [0x90, 0x3C, 0x64], forward),
            ("C3 E3 G3 together (running status): chord = A+B", [0x30, 0x64, 0x34, 0x64, 0x37, 0x64], chord),
            ("bend right, from the centre to the top (a clock byte inside)", [0xE0, 0x00, 0x41, 0xE0, 0x7F, 0xF8, 0x7F],
             ControllerState(angle: quarterPi, buttons: [.forward, .a, .b])),
            ("release the chord", [0x80, 0x30, 0x40, 0x34, 0x40, 0x37, 0x40], ControllerState(angle: quarterPi, buttons: .forward)),
            ("let the wheel spring back", [0xE0, 0x00, 0x40], forward),
            ("release C4 (note-on, velocity 0)", [0x90, 0x3C, 0x00], .neutral),
            ("C4 down again", [0x90, 0x3C, 0x7F], forward),
        ]
        for (what, bytes, want) in phrase {
            try pty.master.writeAll(bytes)
            #expect(try capture.waitFor(want), "\(what): no \(want); stderr: \(child.stderr)")
        }

        // Unplug: the bridge goes away with C4 still down.
        pty.close()
        ptyOpen = false
        #expect(try capture.waitFor(.neutral), "unplugging did not send neutral; stderr: \(child.stderr)")
        #expect(child.waitForOutput { _, err in err.contains("hung up") && err.contains("sending neutral") }, "\(child.stderr)")
        #expect(child.isRunning, "the controller waits for the device to come back")

        child.signal(SIGTERM)
        #expect(child.wait() == 0)
        try capture.drain()
        #expect(distinct(capture.states) == [.neutral] + phrase.map(\.2) + [.neutral], "\(distinct(capture.states))")
        #expect(capture.states.suffix(3).allSatisfy { $0 == .neutral })
    }

    /// A bridge unplugged and plugged in again under the same name (a symlink, as udev makes):
    /// neutral at once, the controller reopens it by itself, and the new device drives only after
    /// a neutral input — a wheel held over at replug does not steer, forward does not go out.
    @Test func aRepluggedDeviceIsReopenedAndDrivesOnlyAfterANeutralInput() throws {
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("midi-link-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        defer { unlink(link) }
        let first = try PseudoTerminal()
        var firstOpen = true
        defer { if firstOpen { first.close() } }
        #expect(symlink(first.slavePath, link) == 0)
        let capture = try PacketCapture()
        let child = try ChildProcess(analogRemote: ["control", "--peer", capture.peer, "--plain", "--quiet", "--rate", "1",
                                                    "--input", "midi-serial:\(link)"])
        defer { child.stop() }
        #expect(try capture.waitFor(.neutral))
        #expect(child.waitForOutput { _, err in err.contains("MIDI input connected") })
        try first.master.writeAll([0x90, 0x3C, 0x64])
        #expect(try capture.waitFor(ControllerState(buttons: .forward)))

        first.close()
        firstOpen = false
        #expect(try capture.waitFor(.neutral))
        let second = try PseudoTerminal()
        defer { second.close() }
        let temporary = link + ".new"
        #expect(symlink(second.slavePath, temporary) == 0)
        #expect(rename(temporary, link) == 0)
        #expect(child.waitForOutput { _, err in err.components(separatedBy: "MIDI input connected").count == 3 }, "\(child.stderr)")

        // Wheel held over, then forward: nothing may move until the wheel is centred and forward released.
        try second.master.writeAll([0xE0, 0x7F, 0x7F, 0x90, 0x3C, 0x64, 0xE0, 0x00, 0x40, 0x80, 0x3C, 0x40, 0x90, 0x3E, 0x64])
        #expect(try capture.waitFor(ControllerState(buttons: .backward)), "stderr: \(child.stderr)")
        child.signal(SIGTERM)
        #expect(child.wait() == 0)
        try capture.drain()
        #expect(distinct(capture.states) == [.neutral, ControllerState(buttons: .forward), .neutral,
                                             ControllerState(buttons: .backward), .neutral], "\(distinct(capture.states))")
    }

    @Test func aPipeThatEndsEndsTheInputWithNeutral() throws {
        let capture = try PacketCapture()
        let child = try ChildProcess(analogRemote: ["control", "--peer", capture.peer, "--plain", "--quiet", "--rate", "1",
                                                    "--input", "midi-serial:/dev/stdin"], stdin: true)
        defer { child.stop() }
        #expect(try capture.waitFor(.neutral))
        #expect(child.waitForOutput { _, err in err.contains("MIDI input connected") })
        child.write(bytes: [0x90, 0x3E, 0x50])    // D4: backward
        #expect(try capture.waitFor(ControllerState(buttons: .backward)), "stderr: \(child.stderr)")
        child.closeStdin()
        #expect(child.wait() == 0, "stderr: \(child.stderr)")
        try capture.drain()
        #expect(capture.states.suffix(3).allSatisfy { $0 == .neutral })
        #expect(child.stderr.contains("end of stream: sending neutral"))
    }

    @Test(.enabled(if: access("/dev/snd", F_OK) != 0, "this machine has /dev/snd"),
          arguments: ["midi", "midi:20:0", "midi:Keystation", "midi:hw:1,0,0"])
    func midiWithoutSoundDevicesFailsAtOnceWithOneLine(input: String) throws {
        let capture = try PacketCapture()
        let child = try ChildProcess(analogRemote: ["control", "--peer", capture.peer, "--input", input])
        #expect(child.wait() == 3)
        let lines = child.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(child.stderr)")
        #expect(lines.first?.hasPrefix("analog-remote: \(input): this machine has no ALSA sound devices (/dev/snd is missing") == true)
        #expect(child.stderr.contains("midi-serial:PATH"))
        #expect(try capture.next(timeout: .milliseconds(1)) == nil, "a packet was sent")
    }

    @Test(.enabled(if: access("/dev/snd", F_OK) != 0, "this machine has /dev/snd"))
    func midiInputsSaysThereIsNoSoundInOneLine() throws {
        let child = try ChildProcess(analogRemote: ["midi-inputs"])
        #expect(child.wait() == 0)
        #expect(child.stdout == "no MIDI inputs: this machine has no ALSA sound devices (/dev/snd is missing); a serial MIDI bridge works with --input midi-serial:PATH\n")
    }

    @Test func aBadMidiConfigIsExitTwoNamingTheKey() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("midi-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).toml")
        try "[midi]\nchanel = 3\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let capture = try PacketCapture()
        let child = try ChildProcess(analogRemote: ["control", "--peer", capture.peer, "--config", file.path,
                                                    "--input", "midi-serial:\(pty.slavePath)"])
        #expect(child.wait() == 2)
        #expect(child.stderr == "analog-remote: \(file.path): midi.chanel: unknown key (allowed: channel, chord_window_ms, chords, deadman, deadzone, full_lock, invert_tilt, notes, tilt, velocity_scale)\n")
    }
}

/// The input source on its own, in this process: what the status line shows while keys are held.
@Suite struct MIDIInputStatusTests {
    @Test func theStatusNamesHeldKeysAndTheirMeaning() throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let input = try MIDIInput(spec: try #require(MIDIDeviceSpec(argument: "midi-serial:\(pty.slavePath)")), configPath: nil)
        defer { input.close() }
        var now = ContinuousClock.now
        let started = try input.start(now: now)
        #expect(started.first == .state(.neutral))
        #expect(input.name == "midi-serial:\(pty.slavePath): no keys held")

        try pty.master.writeAll([0x90, 0x3C, 0x64, 0x40, 0x64, 0x30, 0x64, 0x34, 0x64])   // C4 E4 C3 E3
        var events: [InputEvent] = []
        let fd = try #require(input.descriptor)
        while !events.contains(.state(ControllerState(buttons: [.forward, .a]))) {
            try #require(try Poller.wait(for: fd, events: .readable, timeout: .seconds(5)).isEmpty == false)
            events += input.read(now: now)
        }
        #expect(input.name == "midi-serial:\(pty.slavePath): C3 … · E3 … · C4 forward · E4 a")
        now += .milliseconds(30)
        #expect(input.nextDeadline.map { $0 <= now } == true)
        _ = input.deadlinePassed(now: now)
        #expect(input.name == "midi-serial:\(pty.slavePath): C3 — · E3 — · C4 forward · E4 a")
    }
}

@Suite struct MIDIInputSpecTests {
    @Test func midiArgumentsParse() {
        #expect(InputSpec(argument: "midi") == .midi(.sequencer(nil)))
        #expect(InputSpec(argument: "midi:24:0") == .midi(.sequencer("24:0")))
        #expect(InputSpec(argument: "midi:hw:1,0,0") == .midi(.rawMIDI("hw:1,0,0")))
        #expect(InputSpec(argument: "midi-serial:/dev/ttyUSB0@38400") == .midi(.serial(path: "/dev/ttyUSB0", baud: 38400)))
        #expect(InputSpec(argument: "midi:") == nil)
        #expect(InputSpec(argument: "midi-serial:/dev/x@123") == nil)
        #expect(InputSpec.forms.contains("midi-serial:PATH[@BAUD]"))
    }
}
