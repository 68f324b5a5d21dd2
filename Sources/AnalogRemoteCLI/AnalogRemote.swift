#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser

@main
struct AnalogRemote: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analog-remote",
        abstract: "Drive a robot board from another machine on the LAN: controllers send an 8-byte state over UDP, receivers turn it into board writes.",
        discussion: "Exit codes: 0 done or stopped on request; 1 runtime failure; 2 bad configuration; 3 device unavailable; 4 network unavailable; 5 no mDNS daemon; 6 several receivers, none chosen; 64 bad arguments.",
        version: "0.1.0",
        subcommands: [Demo.self, Receive.self, Control.self, Browse.self, Advertise.self, BoardSim.self, Boards.self,
                      Gamepads.self, StopAll.self, Game.self, Web.self, BenchCLI.self, Doctor.self]
    )

    /// ArgumentParser's `main()`, with the config files of `receive` and `control` laid under
    /// their command lines first (ConfigFiles.swift). A bad config file: one line, exit 2.
    static func main() {
        let resolved: ConfigFiles.Resolved
        do {
            resolved = try ConfigFiles.resolve(Array(CommandLine.arguments.dropFirst()))
        } catch {
            printError("analog-remote: \(error)")
            Glibc.exit(2)
        }
        do {
            var command = try parseAsRoot(resolved.arguments)
            try command.run()
        } catch {
            if exitCode(for: error) != .success, let line = ConfigFiles.blame(error, in: resolved, command: self) {
                printError("analog-remote: \(line)")
                Glibc.exit(2)
            }
            exit(withError: error)
        }
    }
}
