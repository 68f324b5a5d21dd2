#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CommandSupport
import ConfigFile
import Console
import ErrorReporting

@main
struct AnalogRemote: ParsableCommand {
    static let version = ProgramVersion.text

    static let configuration = CommandConfiguration(
        commandName: "analog-remote",
        abstract: "Drive a robot board from another machine on the LAN: controllers send an 8-byte state over UDP, receivers turn it into board writes.",
        discussion: "Exit codes: 0 done or stopped on request; 1 runtime failure; 2 bad configuration; 3 device unavailable; 4 network unavailable (also: a controller that never heard back); 5 no mDNS daemon; 6 several receivers, none chosen; 64 bad arguments; 127 `web` without analog-remote-web installed.",
        version: "analog-remote \(version)",
        subcommands: [Demo.self, Receive.self, Rest.self, Reload.self, Control.self, Browse.self, Advertise.self, BoardSim.self, Boards.self,
                      Gamepads.self, MidiInputs.self, StopAll.self, Game.self, Web.self, BenchCLI.self, Doctor.self, Plot.self,
                      Keygen.self]
    )

    /// Checks the command name first (also after `help`), so a typo is an error with a
    /// suggestion (exit 64) rather than the top-level help and exit 0; then lays the config files
    /// of `receive` and `control` under their command lines (ConfigFiles.swift; a bad config file:
    /// one line, exit 2); then ArgumentParser's parse and run. `stop-all` skips all of that (below).
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The teacher's stop is the emergency: it is parsed as a command of its own, before the
        // command names are checked and without the whole command tree (whose reflection was
        // most of the start-up before its first datagram).
        // Help and --version go the usual way, so they read as every other command's.
        if arguments.first == StopAll._commandName,
           !arguments.contains(where: { ["-h", "--help", "--version", "--experimental-dump-help"].contains($0) || $0.hasPrefix("--generate-completion") }) {
            do {
                var command = try StopAll.parseAsRoot(Array(arguments.dropFirst()))
                try command.run()
                Glibc.exit(0)
            } catch {
                failCommand(error, as: StopAll.self)
            }
        }
        // `web` is another program (WebLauncher.swift): its arguments and its help are its own.
        if arguments.first == Web._commandName {
            Web.replaceProcess(arguments: Array(arguments.dropFirst()))
        }
        if arguments.count >= 2, arguments[0] == "help", arguments[1] == Web._commandName {
            Web.replaceProcess(arguments: ["--help"])
        }
        if let problem = CommandNames.problem(arguments, names: configuration.subcommands.map { $0._commandName }) {
            StandardError.write("analog-remote: \(problem)\n")
            Self.exit(withError: ExitCode(ExitStatus.usage.rawValue))
        }
        let resolved: ConfigFiles.Resolved
        do {
            resolved = try ConfigFiles.resolve(arguments)
        } catch {
            StandardError.write("analog-remote: \(error)\n")
            Glibc.exit(2)
        }
        do {
            var command = try parseAsRoot(resolved.arguments)
            try command.run()
        } catch {
            if exitCode(for: error) != .success, let line = ConfigFiles.blame(error, in: resolved, command: self) {
                StandardError.write("analog-remote: \(line)\n")
                Glibc.exit(2)
            }
            failCommand(error, as: Self.self)
        }
    }
}

/// The first word of the command line must name a command (or be `help` and then name one).
enum CommandNames {
    static func problem(_ arguments: [String], names: [String]) -> String? {
        guard var word = arguments.first, !word.hasPrefix("-") else { return nil }
        if word == "help" {
            guard arguments.count >= 2 else { return nil }
            word = arguments[1]
            if word.hasPrefix("-") { return nil }
        }
        guard !names.contains(word) else { return nil }
        return "unknown command \"\(word)\"\(Suggestion.hint(for: word, among: names)); commands: \(names.joined(separator: ", ")) (analog-remote help COMMAND shows its options)"
    }
}
