import ArgumentParser

struct Receive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Take state packets from controllers and drive the board attached to this machine.")

    func run() throws {
        printError("analog-remote receive: not built yet")
        throw ExitCode(1)
    }
}
