import Foundation

/// One line of `analog-remote doctor`: what was checked, how it went, and how to fix it.
///
/// ```
/// ok    avahi: avahi-daemon is running (pid 412) and answers DNS-SD requests
/// fail  groups: root is not in dialout — fix: sudo usermod -aG dialout root, then log in again
/// ```
package struct DoctorCheck: Sendable, Hashable {
    package enum Verdict: String, Sendable, Hashable, Comparable {
        case ok, skip, warn, fail

        private var rank: Int { [.ok: 0, .skip: 1, .warn: 2, .fail: 3][self] ?? 3 }
        package static func < (a: Verdict, b: Verdict) -> Bool { a.rank < b.rank }
    }

    /// Short stable name: `dbus`, `avahi`, `groups`, `boards`, `port`, `multicast`, `mdns`, `firewall`,
    /// `config`, `service`, `clock`.
    package var name: String
    package var verdict: Verdict
    package var detail: String
    /// What to do about a warn or fail (empty for ok).
    package var fix: String

    package init(_ name: String, _ verdict: Verdict, _ detail: String, fix: String = "") {
        self.name = name
        self.verdict = verdict
        self.detail = detail
        self.fix = fix
    }

    package var line: String {
        let head = verdict.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0) + "\(name): \(detail)"
        return fix.isEmpty ? head : head + " — fix: \(fix)"
    }
}

/// `doctor`'s exit status: 0 when every check is ok (or skipped: a check that could not run
/// without root), 1 when any check warns or fails (docs/troubleshooting.md).
package enum DoctorVerdict {
    package static func exitStatus(_ checks: [DoctorCheck]) -> Int32 {
        checks.contains { $0.verdict == .warn || $0.verdict == .fail } ? 1 : 0
    }
}
