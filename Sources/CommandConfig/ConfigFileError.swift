/// A config file that cannot be used, said in one line naming the file and the key:
/// `config /etc/analog-remote/receive.toml: unknown key "prot" (known: accept, board, …)`.
/// The CLI prints it after `analog-remote: ` and exits 2 (README "Exit codes").
public struct ConfigFileError: Error, Hashable, Sendable, CustomStringConvertible {
    public let file: String
    /// The key, or "" for a whole-file problem (cannot read it, a syntax error).
    public let key: String
    public let problem: String

    public init(file: String, key: String, problem: String) {
        self.file = file
        self.key = key
        self.problem = problem
    }

    public var description: String {
        key.isEmpty ? "config \(file): \(problem)" : "config \(file): key \"\(key)\": \(problem)"
    }
}
