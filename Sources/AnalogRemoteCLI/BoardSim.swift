#if canImport(Glibc)
import CommandSupport
import Glibc
#endif
import ArgumentParser
import BoardFirmware
import BoardProtocol
import BoardSimulator
import Console
import Foundation
import SerialTTY
import SystemIO

extension BoardProfileKind: ExpressibleByArgument {}

struct BoardSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board-sim",
        abstract: "Run a simulated programland board on a pseudo-terminal.",
        discussion: """
        The board answers byte for byte as the kit's firmware does (echo, replies, the ">" prompt, \
        its quirks). --firmware stock (the default) is the kit's published firmware: a 34-byte \
        map (0x00–0x21), no motors; LEDs at 0x0f/0x10, buzzer at 0x09/0x0a, VAR1–VAR8 at \
        0x12–0x19. --firmware motors adds signed motor bytes at 0x22/0x23 (left mirrored; a \
        36-byte map). Like a new board, its EEPROM is erased: it boots with 0xff in the LEDs, \
        buzzer and variables until a host writes them. Its loop draws a new random byte, counts \
        the timer in seconds and reads the switch and sensors again all the time; the buzzer \
        sounds only when a write touches 0x09 or 0x0a. Connect with --board serial:PATH (or \
        midi-serial:PATH with --midi). It runs until SIGINT/SIGTERM, then removes its --link.

        stdout, each line flushed at once:
          line 1: the path to connect to (the --link path, else /dev/pts/N)
          "cmd LINE" (--trace): each complete command line the board took,
            without its terminator; other than printable ASCII: \\r \\n \\t \\0 \\\\ \\xNN
          "map HEX" (--trace): after each command that changed the memory map,
            the whole map, two lowercase hex digits per byte from address 0
            (68 digits for the stock firmware's 34 bytes, 72 for motors)
          "overlap" (--trace): a host sent a command before the last prompt (with
            --allow-write-behind-read, one W right behind one R is not one: §4.6 rule 8)
          "at MICROSECONDS" (--trace-times): before each "cmd" line, when the board
            took it (CLOCK_MONOTONIC), for timing tests (record and replay)
          "sensors sensor1=N … humidity=N" (--trace): after the --sensors file changed,
            what the map now holds at 0x0b-0x0e, 0x11, 0x07 (signed) and 0x08
        Parsers should ignore lines they do not know.

        On a terminal, stderr shows what a person would see and hear on the board, live, unless \
        --quiet: the LEDs' brightness, the buzzer's note while it sounds, and the wheel speeds \
        the map holds (forward positive: the motor bytes with the left one un-mirrored, or, on \
        the stock firmware, VAR1/VAR2 as the stock mapping writes them) and the switch.

        Sensors: --sensors FILE sets what the board senses. The file holds key=value pairs \
        separated by spaces or lines: sensor1..sensor4 (0-255), switch (0 or 1), temperature \
        (-128..127 °C), humidity (0-100 %RH); a key left out keeps its value, # starts a comment. \
        board-sim looks at the file every 20 ms and applies it when it changed (write a new file \
        and rename it over the old one, so it is never read half-written); a file that does not \
        parse is reported on stderr and changes nothing. Without the file (or before it exists) \
        every sensor reads 0, like a board with nothing plugged in.
        """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Also make PATH a symlink to the pseudo-terminal (a stale symlink there is replaced).", valueName: "path"))
    var link: String?

    @Flag(help: "MIDI framing, as the kit's iOS build: SysEx in, whole-line echo and note pairs (90 c1 c2) out.")
    var midi = false

    @Option(help: ArgumentHelp("Answer at this serial speed (10 bits a byte), like a slow UART board; default: at once.", valueName: "baud"))
    var baud: Int?

    @Option(help: ArgumentHelp("Read what the board senses from FILE (key=value: sensor1..sensor4, switch, temperature, humidity), looked at every 20 ms.",
                               valueName: "file"))
    var sensors: String?

    @Flag(help: "Print each command line (cmd …) and the memory map after each change (map …) on stdout.")
    var trace = false

    @Flag(help: "With --trace: an `at MICROSECONDS` line (monotonic clock) before each `cmd` line.")
    var traceTimes = false

    @Flag(help: "Do not count one W sent right behind one unanswered R as an overlap (a host under `receive --write-behind-read`; the kit's firmware answers both in one pass).")
    var allowWriteBehindRead = false

    @Option(help: ArgumentHelp("The firmware: `stock` = the kit's published firmware (34-byte map, no motors); `motors` = with motor bytes at 0x22/0x23 (36 bytes).",
                               valueName: "stock|motors"))
    var firmware: BoardProfileKind = .stock

    @Option(help: ArgumentHelp("A faulty board, for tests: acknowledge writes to these addresses (e.g. 0x23,0x10) and drop them.",
                               valueName: "addresses"))
    var dropWrites: String?

    func validate() throws {
        if let baud, baud <= 0 || baud > 4_000_000 {
            throw ValidationError("--baud \(baud): use a speed between 1 and 4000000, e.g. 9600")
        }
        _ = try droppedAddresses()
    }

    var profile: MemoryMapProfile { firmware.profile }

    func droppedAddresses() throws -> Set<UInt8> {
        guard let dropWrites else { return [] }
        var out: Set<UInt8> = []
        for part in dropWrites.split(separator: ",") {
            let text = part.trimmingCharacters(in: .whitespaces).lowercased()
            let value = text.hasPrefix("0x") ? UInt8(text.dropFirst(2), radix: 16) : UInt8(text)
            guard let value else {
                throw ValidationError("--drop-writes \(dropWrites): give addresses like 0x23 or 35, separated by commas")
            }
            out.insert(value)
        }
        return out
    }

    func run() throws {
        try runReporting {
            var options = PseudoTerminalBoard.Options()
            options.profile = profile
            options.dropWrites = (try? droppedAddresses()) ?? []
            options.framing = midi ? .midi : .text
            options.timing = baud.map(WireTiming.init(baud:))
            options.linkPath = link
            options.sensorsFile = sensors
            options.allowsWriteBehindRead = allowWriteBehindRead
            return try BoardSimCommand.run(options, trace: trace, traceTimes: traceTimes, status: global.bootstrap())
        }
    }
}
