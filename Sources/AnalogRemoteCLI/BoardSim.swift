#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import BoardProtocol
import BoardSimulator
import Console
import SerialTTY
import SystemIO

struct BoardSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board-sim",
        abstract: "Run a simulated programland board on a pseudo-terminal.",
        discussion: """
        The board answers byte for byte as the kit's firmware does (echo, replies, the ">" prompt, \
        its quirks), with a 36-byte memory map: motors at 0x22/0x23 (signed, left mirrored), \
        LEDs at 0x0f/0x10, buzzer at 0x09/0x0a. Connect with --board serial:PATH (or \
        midi-serial:PATH with --midi). It runs until SIGINT/SIGTERM, then removes its --link.

        stdout, each line flushed at once:
          line 1: the path to connect to (the --link path, else /dev/pts/N)
          "cmd LINE" (--trace): each complete command line the board took,
            without its terminator; other than printable ASCII: \\r \\n \\t \\0 \\\\ \\xNN
          "map HEX" (--trace): after each command that changed the memory map,
            the whole map, two lowercase hex digits per byte from address 0
            (72 digits for 36 bytes)
          "overlap" (--trace): a host sent a command before the last prompt
        Parsers should ignore lines they do not know.

        On a terminal, stderr shows the board live (motor bars, LEDs, buzzer) unless --quiet.
        """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Also make PATH a symlink to the pseudo-terminal (a stale symlink there is replaced).", valueName: "path"))
    var link: String?

    @Flag(help: "MIDI framing, as the kit's iOS build: SysEx in, whole-line echo and note pairs (90 c1 c2) out.")
    var midi = false

    @Option(help: ArgumentHelp("Answer at this serial speed (10 bits a byte), like a slow UART board; default: at once.", valueName: "baud"))
    var baud: Int?

    @Flag(help: "Print each command line (cmd …) and the memory map after each change (map …) on stdout.")
    var trace = false

    @Option(help: ArgumentHelp("Bytes in the memory map (34 = the published firmware, without motors).", valueName: "bytes"))
    var mapSize = 36

    func validate() throws {
        if let baud, baud <= 0 || baud > 4_000_000 {
            throw ValidationError("--baud \(baud): use a speed between 1 and 4000000, e.g. 9600")
        }
        if let problem = profile.problem {
            throw ValidationError("--map-size \(mapSize): \(problem)")
        }
    }

    var profile: MemoryMapProfile {
        if mapSize >= 36 { return MemoryMapProfile(size: mapSize) }
        // A map without room for motors: keep them out of the way of the check (the board drops them).
        return MemoryMapProfile(size: mapSize, motorLeft: UInt8(max(0, mapSize - 2)), motorRight: UInt8(max(0, mapSize - 1)))
    }

    func run() throws {
        try runReporting {
            let status = global.bootstrap()
            let signals: SignalWatcher
            do {
                signals = try SignalWatcher()
            } catch {
                throw UserFacingError("board-sim: cannot watch signals: \(error)", status: .failure)
            }
            var options = PseudoTerminalBoard.Options()
            options.profile = profile
            options.framing = midi ? .midi : .text
            options.timing = baud.map(WireTiming.init(baud:))
            options.linkPath = link
            let host: PseudoTerminalBoard
            do throws(BoardSimulatorError) {
                host = try PseudoTerminalBoard(options: options)
            } catch {
                switch error {
                case .badOption(let message): throw UserFacingError("board-sim: \(message)", status: .badConfiguration)
                case .system: throw UserFacingError("board-sim: \(error)", status: .deviceUnavailable)
                }
            }
            defer { host.close() }
            StandardOutput.write(host.path + "\n")
            status.update(Self.statusText(host.board, path: host.path, overlaps: 0), force: true)
            do {
                try host.run(stopDescriptor: signals.readableDescriptor, onRefresh: { board in
                    status.update(Self.statusText(board, path: host.path, overlaps: host.overlaps), force: true)
                }) { event, board in
                    switch event {
                    case .line(let line):
                        if trace {
                            var out = "cmd " + ByteText.escaped(line.text) + "\n"
                            if line.changedMap { out += "map " + ByteText.hex(board.memoryMap) + "\n" }
                            StandardOutput.write(out)
                        }
                    case .overlap:
                        if trace { StandardOutput.write("overlap\n") }
                    }
                }
            } catch {
                throw UserFacingError("board-sim: \(error)", status: .failure)
            }
            status.clear()
            return .success
        }
    }

    /// `L [######|      ]  -64  R [      |######]  +64  LED1 100  LED2 200  buzzer C4 160 ms  lines 12`
    static func statusText(_ board: SimulatedBoard, path: String, overlaps: Int) -> String {
        var parts: [String] = []
        if let (left, right) = board.motors {
            func pad(_ v: Int8) -> String { let s = v > 0 ? "+\(v)" : "\(v)"; return String(repeating: " ", count: max(0, 4 - s.count)) + s }
            parts.append("L \(StatusLine.bar(Double(left) / 127, width: 13)) \(pad(left))")
            parts.append("R \(StatusLine.bar(Double(right) / 127, width: 13)) \(pad(right))")
        }
        let p = board.profile
        parts.append("LED1 \(board.value(at: p.led1) ?? 0)")
        parts.append("LED2 \(board.value(at: p.led2) ?? 0)")
        parts.append("buzzer \(buzzerText(tone: board.value(at: p.buzzerTone) ?? 0, time: board.value(at: p.buzzerTime) ?? 0))")
        parts.append("lines \(board.linesTaken)")
        if overlaps > 0 { parts.append("OVERLAPS \(overlaps)") }
        parts.append(path)
        return parts.joined(separator: "  ")
    }

    /// Tone 1…37 is C3…C6 (the firmware's tone table); the time is × 16 ms.
    static func buzzerText(tone: UInt8, time: UInt8) -> String {
        guard tone > 0 else { return "off" }
        guard tone <= 37 else { return "tone \(tone)?" }
        let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
        let n = Int(tone) - 1
        return "\(names[n % 12])\(3 + n / 12) \(Int(time) * 16) ms"
    }
}

