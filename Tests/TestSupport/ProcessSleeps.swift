import Foundation

/// How often a process went to sleep: its threads' voluntary context switches summed
/// (`/proc/PID/task/*/status`). Preemption on a loaded machine (involuntary switches) is not a
/// wake-up of the process's own, so it is not counted. For the idle wake-up tests.
public enum ProcessSleeps {
    public static func count(_ pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var total = 0
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                total += Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
            }
        }
        return total
    }
}
