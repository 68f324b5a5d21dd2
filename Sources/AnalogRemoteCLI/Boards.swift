import ArgumentParser
import BoardLink
import BoardProtocol
import Console

struct Boards: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "boards",
        abstract: "List the boards (serial ports, MIDI devices) attached to this machine.",
        discussion: """
        Lists /dev/ttyACM* and /dev/ttyUSB* with their USB vendor:product ids and names from sysfs, \
        and ALSA rawmidi devices, each as the --board spec that opens it. With --probe SPEC, opens \
        that board instead and reads its memory map once (exit 3 if it cannot be opened or does not answer).
        """)

    @Option(help: ArgumentHelp("Open this board (sim, serial:PATH[@baud], midi:hw:C,D,S, midi-serial:PATH[@baud]) and read its memory map.", valueName: "spec"))
    var probe: String?

    @Option(help: ArgumentHelp("Bytes to read with --probe.", valueName: "bytes"))
    var mapSize = 36

    func validate() throws {
        guard (1...255).contains(mapSize) else { throw ValidationError("--map-size \(mapSize): use 1…255") }
    }

    func run() throws {
        try runReporting {
            if let probe { return try Self.probe(probe, size: mapSize) }
            let candidates = BoardCandidates.list()
            if candidates.isEmpty {
                print("no boards found")
                return .success
            }
            let width = candidates.map { $0.spec.description.count }.max() ?? 0
            for c in candidates {
                let spec = c.spec.description
                print(spec + String(repeating: " ", count: width - spec.count + 2) + c.details)
            }
            return .success
        }
    }

    static func probe(_ text: String, size: Int) throws -> ExitStatus {
        do {
            let spec = try BoardSpec(text)
            let client = try BoardClient(spec: spec)
            defer { client.close() }
            let map = try client.read(address: 0, count: UInt8(size))
            print("\(spec.device): answered; memory map \(ByteText.hex(map))")
            return .success
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
