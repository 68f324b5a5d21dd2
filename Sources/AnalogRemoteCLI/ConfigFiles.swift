#if canImport(Glibc)
import CommandSupport
import Glibc
#endif
import ArgumentParser
import CommandConfig
import ConfigFile

/// Which subcommands read a config file, where, and how the command line is laid over it
/// (CommandConfig's ``ConfigOverlay``; docs/config.md).
enum ConfigFiles {
    /// `receive`: the robot's service reads this (the package installs an example there).
    static let receiveDefault = "/etc/analog-remote/receive.toml"

    /// `control`: `$XDG_CONFIG_HOME/analog-remote/control.toml`, `~/.config/…` by default.
    static func controlDefault() -> String? {
        if let xdg = environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/analog-remote/control.toml" }
        guard let home = environment("HOME") else { return nil }
        return home + "/.config/analog-remote/control.toml"
    }

    /// The command line to parse: `arguments` (without the program name) with the config file
    /// of `receive` / `control` laid under the subcommand's arguments (`rest`: the board, profile and map of
    /// `receive`'s file); others pass unchanged.
    struct Resolved {
        var arguments: [String]
        var overlay: ConfigOverlay?
        /// The arguments typed after the subcommand's name.
        var typed: [String]
    }

    static func resolve(_ arguments: [String]) throws(ConfigFileError) -> Resolved {
        guard let first = arguments.first else { return Resolved(arguments: arguments, typed: []) }
        let typed = Array(arguments.dropFirst())
        // Help works whatever state the config file is in.
        if typed.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            return Resolved(arguments: arguments, typed: typed)
        }
        let overlay: ConfigOverlay
        switch first {
        case "receive":
            overlay = try ConfigOverlay.resolve(typed, keys: OptionKeys.of(Receive.self, groups: [GlobalOptions.self, BlackBoxOptions.self]),
                                                defaultFile: receiveDefault)
        case "rest":
            // The receiver's own file, checked as `receive` checks it (a file receive would refuse
            // is refused here too); only the keys that name the board and its mapping are used.
            overlay = try ConfigOverlay.resolve(typed, keys: OptionKeys.of(Receive.self, groups: [GlobalOptions.self, BlackBoxOptions.self]),
                                                defaultFile: receiveDefault).keeping(Rest.fileKeys)
        case "control":
            // `[gamepad]` and `[midi]` are the input mappings, read by `control --input gamepad|midi…`
            // from the same file.
            overlay = try ConfigOverlay.resolve(typed, keys: OptionKeys.of(Control.self, groups: [GlobalOptions.self, RecordOptions.self]),
                                                defaultFile: controlDefault(), tables: ["gamepad", "midi"])
        default:
            return Resolved(arguments: arguments, typed: typed)
        }
        // A config that holds a secret itself must be as private as a key file (docs/security.md).
        if let file = overlay.file, let key = overlay.fileKeys.first(where: { ["teacher-key", "secret"].contains($0) }),
           let problem = SecretArguments.permissionProblem(file) {
            throw ConfigFileError(file: file, key: key, problem: "\(problem) (or move the secret to a file of its own: \(key)-file)")
        }
        return Resolved(arguments: [first] + overlay.arguments, overlay: overlay, typed: typed)
    }

    /// When the parser refuses a value that came from the file (and was not typed), the line
    /// names the file and the key: the problem is there, exit 2 (not 64).
    static func blame(_ error: any Error, in resolved: Resolved, command: any ParsableCommand.Type) -> String? {
        guard let overlay = resolved.overlay, let file = overlay.file else { return nil }
        let message = command.message(for: error)
        guard let key = overlay.blames(message, typed: resolved.typed) else { return nil }
        return "\(ConfigFileError.command(file: file, key: key, problem: message))"
    }

    private static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}
