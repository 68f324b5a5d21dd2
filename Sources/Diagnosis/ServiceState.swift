import Foundation

/// The receiver service as systemd sees it, for doctor's `service` line: read from
/// `systemctl show` (state, restarts, and how the main process ended while none runs) and, once
/// it runs again after automatic restarts, the journal's last "main process exited" record
/// (`systemctl show` then only knows the new process). Parsing only; ``Doctor/service()`` runs
/// the tools.
package struct ServiceState: Sendable, Hashable {
    /// How a main process ended (systemd's EXIT_CODE / EXIT_STATUS).
    package struct Exit: Sendable, Hashable {
        /// `exited`, `killed` or `dumped`.
        package var code: String
        /// The exit status for `exited`, else the signal's number.
        package var status: String
        /// systemd's verdict on that run (`watchdog`, `exit-code`, `signal`, …), when it failed.
        package var result: String?

        package init(code: String, status: String, result: String? = nil) {
            self.code = code
            self.status = status
            self.result = result
        }

        /// In the words of README "Exit codes".
        package var summary: String {
            let watchdog = result == "watchdog" ? ", a watchdog timeout" : ""
            let signals = ["1": "HUP", "2": "INT", "6": "ABRT", "9": "KILL", "11": "SEGV", "15": "TERM"]
            guard code == "exited" else {
                return "\(code == "dumped" ? "killed (core dumped)" : "killed") by \(signals[status].map { "SIG\($0)" } ?? "signal \(status)")\(watchdog)"
            }
            let meaning = ["0": "stopped", "1": "a runtime failure", "2": "a configuration error",
                           "3": "a device (the board) unavailable", "4": "the network refused",
                           "5": "no mDNS responder"][status]
            return "exit \(status)" + (meaning.map { " (\($0))" } ?? "")
        }
    }

    package var unit: String
    /// `loaded`, `not-found`, …
    package var loadState: String
    /// `active`, `activating`, `reloading`, `inactive`, `failed`, `deactivating`.
    package var activeState: String
    /// `running`, `auto-restart`, `dead`, …
    package var subState: String
    /// Automatic restarts since it was last started by hand.
    package var restarts: Int
    /// `success`, `watchdog`, `exit-code`, `signal`, … (of the current or last run).
    package var result: String
    /// How the last main process that ended, ended (nil when none has, or the journal is closed).
    package var lastExit: Exit?

    /// The properties ``init(unit:show:journalExit:)`` reads from `systemctl show`.
    package static let properties = "LoadState,ActiveState,SubState,NRestarts,Result,MainPID,ExecMainCode,ExecMainStatus"

    /// From `systemctl show --property=\(properties) UNIT` (KEY=value lines) and the journal's
    /// last main-process exit record, if any (``lastExit(journalJSON:)``).
    package init(unit: String, show: String, journalExit: Exit?) {
        var values: [Substring: Substring] = [:]
        for line in show.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            values[line[..<eq]] = line[line.index(after: eq)...]
        }
        self.unit = unit
        loadState = values["LoadState"].map(String.init) ?? "unknown"
        activeState = values["ActiveState"].map(String.init) ?? "unknown"
        subState = values["SubState"].map(String.init) ?? "unknown"
        restarts = values["NRestarts"].flatMap { Int($0) } ?? 0
        result = values["Result"].map(String.init) ?? "unknown"
        // ExecMainCode: 1 exited, 2 killed, 3 dumped (CLD_*); 0 while nothing has ended.
        let code = values["ExecMainCode"].flatMap { Int($0) } ?? 0
        let mainPID = values["MainPID"].flatMap { Int($0) } ?? 0
        if mainPID == 0, (1...3).contains(code) {
            lastExit = Exit(code: ["exited", "killed", "dumped"][code - 1], status: values["ExecMainStatus"].map(String.init) ?? "?",
                            result: result == "success" ? nil : result)
        } else if restarts > 0 {
            lastExit = journalExit
        } else {
            lastExit = nil
        }
    }

    /// The fields ``lastExit(journalJSON:)`` reads (`journalctl --output-fields=`).
    package static let journalFields = "EXIT_CODE,EXIT_STATUS,COMMAND,UNIT_RESULT"

    /// The last main process's end from `journalctl --unit UNIT --output=json
    /// --output-fields=\(journalFields)` (one JSON object a line): systemd's "Main process
    /// exited" record (COMMAND=ExecStart; a failed ExecReload has its own) and the "failed with
    /// result" record that follows it. Clean exits are not recorded there (systemd logs them at
    /// debug level), which is why only a restarted service asks the journal.
    package static func lastExit(journalJSON text: String) -> Exit? {
        var found: Exit?
        let decoder = JSONDecoder()
        for line in text.split(separator: "\n") {
            guard let record = try? decoder.decode(JournalRecord.self, from: Data(line.utf8)) else { continue }
            if let code = record.EXIT_CODE, let status = record.EXIT_STATUS {
                guard record.COMMAND == "ExecStart" else { continue }
                found = Exit(code: code, status: status)
            } else if let result = record.UNIT_RESULT {
                found?.result = result
            }
        }
        return found
    }

    /// The fields of one journal record ``lastExit(journalJSON:)`` reads (a field that is not a
    /// string, as journald writes binary data, counts as absent).
    private struct JournalRecord: Decodable {
        var EXIT_CODE: String?
        var EXIT_STATUS: String?
        var COMMAND: String?
        var UNIT_RESULT: String?

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            func text(_ key: CodingKeys) -> String? { (try? c.decodeIfPresent(String.self, forKey: key)) ?? nil }
            EXIT_CODE = text(.EXIT_CODE)
            EXIT_STATUS = text(.EXIT_STATUS)
            COMMAND = text(.COMMAND)
            UNIT_RESULT = text(.UNIT_RESULT)
        }

        enum CodingKeys: String, CodingKey { case EXIT_CODE, EXIT_STATUS, COMMAND, UNIT_RESULT }
    }

    /// Doctor's line: ok when it runs and never had to be restarted; warn when it runs after
    /// restarts, or is installed but not running; fail when it is restarting or failed.
    package var check: DoctorCheck {
        let last = lastExit.map { "; last exit: \($0.summary)" } ?? ""
        let restartText = "\(restarts) automatic restart\(restarts == 1 ? "" : "s")"
        let log = "journalctl -u \(unit) -n 30 shows why"
        guard loadState == "loaded" else {
            return DoctorCheck("service", .skip, "\(unit) is not installed (the .deb or scripts/install.sh installs it)")
        }
        switch (activeState, subState) {
        case ("active", _), ("reloading", _):
            if restarts == 0 { return DoctorCheck("service", .ok, "\(unit) is \(activeState) (\(subState)), \(restartText)\(last)") }
            return DoctorCheck("service", .warn, "\(unit) is \(activeState) (\(subState)) but needed \(restartText)\(last)", fix: log)
        case ("activating", _) where restarts > 0, ("activating", "auto-restart"), ("failed", _):
            let hint = lastExit?.status == "3" && lastExit?.code == "exited" ? "check the boards line above; " : ""
            return DoctorCheck("service", .fail, "\(unit) is \(activeState) (\(subState)), \(restartText)\(last)",
                               fix: hint + log)
        case ("inactive", _):
            return DoctorCheck("service", .warn, "\(unit) is installed but not running\(last)",
                               fix: "sudo systemctl enable --now \(unit.replacingSuffix(".service"))")
        default:
            return DoctorCheck("service", .warn, "\(unit) is \(activeState) (\(subState)), \(restartText)\(last)", fix: log)
        }
    }
}

extension String {
    fileprivate func replacingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
