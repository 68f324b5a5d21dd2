import ArgumentParser

struct Boards: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "boards",
        abstract: "List the boards (serial ports, MIDI devices) attached to this machine.")

    func run() throws {
        printError("analog-remote boards: not built yet")
        throw ExitCode(1)
    }
}
