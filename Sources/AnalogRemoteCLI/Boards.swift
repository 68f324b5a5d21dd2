import ArgumentParser
import BoardLink
import BoardProtocol
import CommandSupport
import Console
import ErrorReporting
import SystemIO

struct Boards: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "boards",
        abstract: "List the boards (serial ports, MIDI devices) attached to this machine.",
        discussion: """
        Lists /dev/ttyACM* and /dev/ttyUSB* with their USB vendor:product ids and names from sysfs, \
        and ALSA rawmidi devices, each as the --board spec that opens it. With --probe SPEC, opens \
        that board instead, probes it (one `R 00 55`, the same read the receiver makes at every \
        connect) and prints what it is: \
        `SPEC: profile stock · firmware product 1 version 1 · memory map 34 bytes (0x00–0x21), no motor bytes`. \
        Exit 3 if it cannot be opened or does not answer, 1 if it answers something else than a memory map.
        """)

    @Option(help: ArgumentHelp("Open this board (sim, sim:stock, serial:PATH[@baud], midi:hw:C,D,S, midi-serial:PATH[@baud]) and say what it is: profile, firmware id/version, map size.", valueName: "spec"))
    var probe: String?

    func run() throws {
        try runReporting {
            if let probe { return try Self.probe(probe) }
            let candidates = BoardCandidates.list()
            if candidates.isEmpty {
                print("no boards found")
                return .done
            }
            let width = candidates.map { $0.spec.description.count }.max() ?? 0
            for c in candidates {
                let spec = c.spec.description
                print(spec + String(repeating: " ", count: width - spec.count + 2) + c.details)
            }
            return .done
        }
    }

    static func probe(_ text: String) throws -> CommandOutcome {
        do {
            let spec = try BoardSpec(text)
            let client = try BoardClient(spec: spec)
            defer { client.close() }
            let identity = try client.probe()
            print("\(spec.device): \(identity)")
            return .done
        } catch {
            switch error.kind {
            case .badSpec: throw UserFacingError(error.message, status: .usage)
            case .badProfile: throw UserFacingError(error.message, status: .badConfiguration)
            case .deviceUnavailable, .lost, .noReply: throw UserFacingError(error.message, status: .deviceUnavailable)
            case .protocolError: throw UserFacingError(error.message, status: .failure)
            }
        }
    }
}
