import ArgumentParser
import CommandSupport
import Console
import ConfigFile
import DrivePlot
import ErrorReporting
import Receiver
import SystemIO

struct Plot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw a recording (control --record) or a black box (receive --black-box) as a picture.",
        discussion: """
            Four panels over one time axis: the tilt, the buttons held (as bands), the wheel speeds \
            the receiver's mapping makes of the states, and the link's round-trip time and loss; \
            failsafes, owners, teacher stops and board link events are dashed lines labelled with \
            their time. -o FILE.svg is written by analog-remote itself; -o FILE.png needs \
            rsvg-convert (Debian: librsvg2-bin). A recording whose last line was cut short (a \
            crash) is drawn up to it, with a warning. Exit 2 for a file that is not a recording \
            (the line is named). See docs/record-replay.md.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The recording or black box file (JSON Lines, Protocol.md §10).", valueName: "file"))
    var file: String

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The picture to write: NAME.svg, or NAME.png (through rsvg-convert).",
                                                                     valueName: "out"))
    var output: String

    @Option(help: ArgumentHelp("The mapping file (.toml or .json) whose wheel speeds to draw; default: the receiver's built-in motors mapping.",
                               valueName: "file"))
    var map: String?

    func validate() throws {
        let lower = output.lowercased()
        guard lower.hasSuffix(".svg") || lower.hasSuffix(".png") else {
            throw ValidationError("-o \(output): give a name ending in .svg or .png.")
        }
    }

    func run() throws {
        try runReporting {
            _ = global.bootstrap()
            var mapping = Mapping.kit
            if let map {
                do throws(MappingFileError) {
                    mapping = try MappingFile.load(path: map)
                } catch {
                    throw CommandFailure(error.description, kind: .badConfiguration)
                }
            }
            let lines = try PlotCommand.run(input: file, output: output, mapping: mapping)
            for line in lines { printError("analog-remote: \(line)") }
            return .done
        }
    }
}
