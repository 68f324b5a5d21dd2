/// What a receiver run by systemd leaves after each reload (SIGHUP), for `analog-remote reload`
/// (the unit's `ExecReload=`) to wait on. systemd 252 takes a reload as done the moment
/// `ExecReload=` exits, so a command that only signals lets `systemctl reload` return while the
/// old configuration is still in force; `reload` signals, then waits for a receipt newer than
/// the one it saw before.
///
/// One line in `$RUNTIME_DIRECTORY/reload`, replaced whole after each reload:
/// `PID COUNT OUTCOME TEXT` — the receiver's pid, how many reloads it has handled (from 1), then
/// `applied`, `unchanged` or `refused` and one line of text, e.g.
/// `4711 3 refused map: no file /etc/analog-remote/fast.toml`.
package struct ReloadReceipt: Hashable, Sendable {
    package enum Outcome: String, Sendable {
        /// A new mapping is in force.
        case applied
        /// Read again; nothing that can change while running changed.
        case unchanged
        /// The configuration was bad: the running one stays.
        case refused
    }

    /// The file's name in the receiver's runtime directory.
    package static let fileName = "reload"

    package var pid: Int32
    package var count: Int
    package var outcome: Outcome
    package var text: String

    package init(pid: Int32, count: Int, outcome: Outcome, text: String) {
        self.pid = pid
        self.count = count
        self.outcome = outcome
        self.text = text
    }

    /// The file's contents (line breaks in the text become spaces: one line).
    package var line: String {
        let flat = String(text.map { $0.isNewline ? " " : $0 })
        return "\(pid) \(count) \(outcome.rawValue) \(flat)\n"
    }

    /// Reads a receipt's line; nil for anything else (a file half written by another program).
    package init?(line: String) {
        let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count >= 3, let pid = Int32(fields[0]), pid > 0, let count = Int(fields[1]), count > 0,
              let outcome = Outcome(rawValue: String(fields[2])) else { return nil }
        let text = fields.count == 4 ? String(fields[3]) : ""
        self.init(pid: pid, count: count, outcome: outcome, text: text.hasSuffix("\n") ? String(text.dropLast()) : text)
    }
}
