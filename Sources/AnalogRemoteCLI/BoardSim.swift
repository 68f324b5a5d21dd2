import ArgumentParser

struct BoardSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board-sim",
        abstract: "Run a simulated programland board on a pseudo-terminal.")

    func run() throws {
        printError("analog-remote board-sim: not built yet")
        throw ExitCode(1)
    }
}
