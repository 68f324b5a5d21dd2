import ArgumentParser

struct Control: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Read a tilt and buttons (keyboard, stdin, script, gamepad) and send them to a receiver.")

    func run() throws {
        printError("analog-remote control: not built yet")
        throw ExitCode(1)
    }
}
