import ArgumentParser

struct Browse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browse",
        abstract: "List the receivers of a session, live.")

    func run() throws {
        printError("analog-remote browse: not built yet")
        throw ExitCode(1)
    }
}
