/// A config file that cannot be used, in one line naming the file and the key, with what was
/// found and what is allowed — for every config file: mapping (`--map`), gamepad and MIDI
/// tables, a command's own config file (receive.toml, control.toml). The CLI prints it after
/// `analog-remote: ` and exits 2 (README "Exit codes").
package struct ConfigFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// How the line names the file and the key.
    package enum Naming: Hashable, Sendable {
        /// `FILE: KEY: problem`: a document whose keys are dotted paths (`drive.left.address`,
        /// `gamepad.buttons.forward`, `buttons[1].on`, `line 3`).
        case document
        /// `config FILE: key "KEY": problem`: a command's config file, whose keys are its options.
        case commandConfig
    }

    package let file: String
    /// The key, or nil for a problem with the whole file (cannot read it, a syntax error).
    package let key: String?
    package let problem: String
    package let naming: Naming

    /// `key` nil or "": the whole file.
    package init(file: String, key: String?, problem: String, naming: Naming = .document) {
        self.file = file
        self.key = key?.isEmpty == false ? key : nil
        self.problem = problem
        self.naming = naming
    }

    package var description: String {
        switch (naming, key) {
        case (.document, nil): "\(file): \(problem)"
        case (.document, let key?): "\(file): \(key): \(problem)"
        case (.commandConfig, nil): "config \(file): \(problem)"
        case (.commandConfig, let key?): "config \(file): key \"\(key)\": \(problem)"
        }
    }
}
