import ArgumentParser
import CommandSupport
import Console
import ErrorReporting
import Gamepad
import SystemIO

struct Gamepads: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gamepads",
        abstract: "List the gamepads and joysticks SDL sees: index, name, GUID, whether a mapping is known.",
        discussion: """
            Pick one for `control` with --input gamepad (the first pad with a mapping), \
            gamepad:INDEX, gamepad:NAME-PART (case-insensitive) or gamepad:GUID (32 hex digits). \
            A pad without a mapping cannot drive; add an SDL mapping line under [gamepad] \
            mappings = [...] in the --config file, or in SDL_GAMECONTROLLERCONFIG. \
            With no pads it prints "no gamepads found" and exits 0.
            """)

    @Option(help: "Controller config file (TOML); the mapping lines in its [gamepad] table count as known.")
    var config: String?

    @Option(name: .customLong("virtual-pad"), help: .hidden)
    var virtualPads: [String] = []

    func run() throws {
        try runReporting {
            var gamepadConfig = GamepadConfig()
            if let config {
                do throws(GamepadConfigError) {
                    gamepadConfig = try GamepadConfig.load(path: config)
                } catch {
                    throw error.userFacing
                }
            }
            let pads: [PadInfo]
            do throws(GamepadError) {
                pads = try GamepadCatalog.list(config: gamepadConfig, virtualPads: virtualPads)
            } catch {
                throw error.userFacing
            }
            print(Self.table(pads))
            let hidden = InputDevices.unreadable()
            if pads.isEmpty && !hidden.isEmpty {
                printError("analog-remote: note: \(hidden.count) device(s) in /dev/input are not readable by you (e.g. \(hidden[0])); if a pad is plugged in, add yourself to the input group and log in again")
            }
            return .done
        }
    }

    /// The listing: a header and one row per pad, or "no gamepads found".
    static func table(_ pads: [PadInfo]) -> String {
        guard !pads.isEmpty else { return "no gamepads found" }
        let nameWidth = max(4, pads.map(\.name.count).max() ?? 0)
        func row(_ index: String, _ name: String, _ guid: String, _ mapping: String) -> String {
            index.padding(6) + name.padding(nameWidth + 2) + guid.padding(34) + mapping
        }
        return ([row("index", "name", "GUID", "mapping")]
            + pads.map { row(String($0.index), $0.name, $0.guid, $0.hasMapping ? "yes" : "no") })
            .joined(separator: "\n")
    }
}

private extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
